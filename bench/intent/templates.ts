/**
 * Synthetic, templated prompts in English and Chinese. `{name}` slots draw from `words.ts`;
 * `{P}`/`{ZP}` draw an English/Chinese passage from the real question pools (QQP, MMLU,
 * LCQMC) so the payload varies while the instruction decides the label; `{N}` a number.
 * Templates mix explicit phrasings (which the pattern layer also catches) with indirect ones.
 */
import type { Intent } from "../../extproc/routing/intent/intents.ts";

export type SyntheticIntent = Exclude<Intent, "qa" | "unknown">;

export const TEMPLATES: Record<SyntheticIntent, { en: readonly string[]; zh: readonly string[] }> = {
  summarize: {
    en: [
      "Summarize the following text:\n{P}", "Can you summarize this for me? {P}", "TL;DR: {P}", "{P}\n\nGive me a one-paragraph summary of the above.",
      "Please write a brief summary of this article:\n\n{P}", "What are the key takeaways from this? {P}", "Condense this into three bullet points:\n{P}",
      "Give me the short version of this: {P}", "{P}\n\nWhat is this passage about, in two sentences?", "Boil this down to one sentence: {P}",
      "Sum up the main points of this email:\n{P}", "I don't have time to read this, what's the gist? {P}", "Write an executive summary of the following report. {P}",
    ],
    zh: [
      "总结一下这篇文章：{ZP}", "请概括以下内容：\n{ZP}", "{ZP}\n\n请用一句话概括上面这段话。", "帮我写个摘要：{ZP}", "这段话的主要内容是什么？{ZP}",
      "用三句话说说下面这段讲了什么：{ZP}", "请提炼这段文字的要点：{ZP}", "{ZP}\n以上内容请归纳一下要点", "简单说说这篇东西讲了啥：{ZP}", "帮我把这份会议记录压缩成几条重点：{ZP}",
    ],
  },
  translate: {
    en: [
      "Translate into {lang}: {P}", "Translate the following sentence into {lang}:\n{P}", "How do you say \"{P}\" in {lang}?", "Please translate this to {lang}. {P}",
      "{P}\n\nCan you put this into {lang}?", "What does this mean in English? {ZP}", "Render this paragraph in {lang}, keeping the tone: {P}", "English please: {ZP}",
      "I need this in {lang} for a client: {P}", "Give me the {lang} version of: {P}", "Translate '{P}' to {lang}",
    ],
    zh: [
      "翻译成{zhLang}：{ZP}", "请把下面这句话翻译成{zhLang}：{ZP}", "把这段英文翻译成中文：{P}", "{P}\n这句话是什么意思？翻译一下", "用{zhLang}怎么说：{ZP}",
      "帮我译成{zhLang}：{ZP}", "中译英：{ZP}", "英译中：{P}", "这段话{zhLang}怎么说？{ZP}", "把下面的邮件翻成{zhLang}，语气正式一点：{ZP}",
    ],
  },
  extract_entity: {
    en: [
      "Extract all {entity} from the following text:\n{P}", "List all the {entity} mentioned in this passage: {P}", "{P}\n\nWhich {entity} appear in the text above?",
      "Pull out every {entity} in this email and return them as JSON: {P}", "Find the {entity} in this sentence: {P}", "Identify the named entities (person, org, location) in: {P}",
      "From the text below, give me a table of {entity}.\n{P}", "Return a JSON list of the {entity} found in: {P}", "What {entity} are referenced here? {P}",
    ],
    zh: [
      "提取下面文本中的所有{zhEntity}：{ZP}", "从这段话中抽取{zhEntity}：{ZP}", "找出下面句子里的{zhEntity}：{ZP}", "{ZP}\n上文提到了哪些{zhEntity}？", "请识别出以下内容中的{zhEntity}，以JSON输出：{ZP}",
      "对下面的文本做命名实体识别：{ZP}", "列出这条新闻里出现的{zhEntity}：{ZP}", "这段话里有哪些{zhEntity}？{ZP}",
    ],
  },
  intent_classify: {
    en: [
      "Classify the intent of this message: \"{P}\" Options: {cats}.", "Which category does this belong to ({cats})? {P}", "Categorize the following customer message into one of: {cats}.\n{P}",
      "What is the user's intent? \"{P}\"", "Label this text as {cats}: {P}", "Is this message a {cats}? Answer with one label only. {P}",
      "Determine the sentiment of this review: {P}", "Route this ticket to the right team ({cats}): {P}", "Tag this query with one of [{cats}]: {P}",
    ],
    zh: [
      "判断这句话的意图：{ZP}", "请对下面的用户消息进行分类（{zhCats}）：{ZP}", "这条评论属于哪一类？{zhCats}。{ZP}", "识别用户意图：{ZP}", "给这段文本打标签，可选：{zhCats}。{ZP}",
      "这条留言的情感倾向是什么？{ZP}", "{ZP}\n请判断上面这句话属于以下哪个类别：{zhCats}", "把这个工单分到合适的类别（{zhCats}）：{ZP}",
    ],
  },
  rewrite: {
    en: [
      "Rewrite this to be {tone}: {P}", "Rephrase the following sentence: {P}", "Polish this paragraph: {P}", "Can you make this sound {tone}? {P}", "Paraphrase: {P}",
      "Fix the grammar in this: {P}", "Improve the wording of this email: {P}", "{P}\n\nReword the above so it's {tone}.", "Proofread and tidy up: {P}", "Say this differently: {P}",
      "Make this {tone} without changing the meaning: {P}", "Edit my cover letter opening: {P}",
    ],
    zh: [
      "润色一下这段话：{ZP}", "把这句话改写得{zhTone}：{ZP}", "请重写下面的段落，{zhTone}一些：{ZP}", "帮我改一下这段文案，让它{zhTone}：{ZP}", "换个说法：{ZP}",
      "修改这段话的措辞：{ZP}", "{ZP}\n帮我把上面这句话改得{zhTone}", "优化一下这段表达：{ZP}", "这句话读着别扭，帮我调整一下：{ZP}",
    ],
  },
  code_gen: {
    en: [
      "Write a {pl} function that {codeTask}.", "Implement a function in {pl} that {codeTask}.", "How do I write code that {codeTask} in {pl}?", "Can you give me {pl} code that {codeTask}?",
      "```{pl}\n{CODE}\n```\nThis throws an error, can you fix it?", "{CODE}\n\nFix the bug in this code.", "Refactor this {pl} snippet to be more readable:\n{CODE}",
      "I need a {pl} script that {codeTask}.", "Create a class in {pl} that {codeTask}.", "Why does this return the wrong result?\n{CODE}", "Add unit tests for this function:\n{CODE}",
      "Write a SQL query that returns the top {N} customers by revenue.", "Convert this Python code to {pl}:\n{CODE}", "{pl}: {codeTask}, with comments please",
    ],
    zh: [
      "用{pl}实现一个函数，{zhCodeTask}", "写一个{pl}程序，实现{zhCodeTask}", "请帮我写段代码：{zhCodeTask}", "{CODE}\n这段代码有bug，帮我修复一下", "帮我看看这段代码为什么报错：\n{CODE}",
      "实现一个{zhCodeTask}的算法，用{pl}", "给下面的函数写单元测试：\n{CODE}", "把这段Python代码改成{pl}：\n{CODE}", "{pl}怎么实现{zhCodeTask}？给出代码",
    ],
  },
  math: {
    en: [
      "What is {N}*{N}?", "Calculate {N} + {N} * {N}.", "Solve for x: {N}x + {N} = {N}", "What's {N} divided by {N}?", "{N} * {N} = ?", "Compute the derivative of x^{N} + {N}x.",
      "If a train travels {N} km in {N} hours, what is its average speed?", "Find the area of a circle with radius {N}.", "Simplify ({N}x + {N}) - ({N}x - {N}).",
      "What is {N}% of {N}?", "A shop sells pens at {N} cents each. How much do {N} pens cost?", "Evaluate the integral of {N}x^2 from 0 to {N}.", "Is {N} a prime number?",
      "What is the square root of {N}?", "Solve the system: x + y = {N}, x - y = {N}.", "Find f({N}) if f(x) = {N}x^2 - {N}x + {N}.", "How many ways can you choose {N} items from {N}?",
    ],
    zh: [
      "计算{N}乘以{N}", "{N}+{N}等于多少？", "解方程：{N}x + {N} = {N}", "求x^{N}的导数", "一个数的{N}倍加{N}等于{N}，这个数是多少？", "{N}除以{N}是多少",
      "求半径为{N}的圆的面积", "小明有{N}个苹果，吃了{N}个，又买了{N}个，现在有几个？", "{N}的平方根是多少", "化简：({N}x+{N})-({N}x-{N})", "从{N}个人中选{N}个人，有多少种选法？",
      "一辆车{N}小时行驶{N}公里，平均速度是多少？", "{N}是质数吗？",
    ],
  },
  multi_hop_reasoning: {
    en: [
      "If {person} is taller than {person} and {person} is shorter than {person}, who is the tallest? Explain step by step.",
      "Compare {x} and {y} for a small team, then recommend one and justify it.", "Estimate how many {thing} there are in {place}. Walk me through your reasoning.",
      "What if {event} had never been invented? Trace the consequences over the following centuries.", "First figure out which {product} fits a $1,000 budget, then explain the trade-offs.",
      "Which is older: the university where the inventor of {event} studied, or {place}'s oldest building? Reason it out.",
      "{person} gave half of her apples to {person}, who gave a third of his to {person}. Who ended up with the most, and why?",
      "Think it through: should we migrate from {x} to {y}? Consider cost, risk and timeline, then decide.",
      "How many {thing} would fit in {place}? Take me through the estimate one step at a time.", "Given that all A are B and some B are C, can we conclude that some A are C? Explain.",
    ],
    zh: [
      "如果{zhPerson}比{zhPerson}高，{zhPerson}比{zhPerson}矮，谁最高？请一步一步推理。", "先比较{x}和{y}的优缺点，然后给出推荐并说明理由。", "请估算{zhPlace}有多少{zhThing}，并说明推理过程。",
      "假如没有{zhEvent}，今天的世界会有什么不同？请逐层分析。", "首先分析问题的原因，然后给出解决方案，最后评估风险：我们的服务延迟突然变高了。",
      "{zhPerson}把一半的糖给了{zhPerson}，{zhPerson}又把三分之一给了{zhPerson}，最后谁的糖最多？为什么？", "所有的A都是B，有些B是C，能否推出有些A是C？请说明理由。",
    ],
  },
  creative_writing: {
    en: [
      "Write a {form} about {topic}.", "Compose a {form} about {topic}.", "Tell me a {form} about {topic}.", "Can you write me a {form} about {topic} for my daughter?",
      "Pretend to be a {role}. Describe your day.", "As a {role}, how would you introduce yourself at a banquet?", "Imagine you are a {role}. What would you say to your team?",
      "Draft a blog post about {topic} in a playful voice.", "I need a {form} featuring {topic}, something melancholic.", "Write the opening paragraph of a novel set in {place}.",
      "Give me a short {form} where {topic} is the main character.", "Write song lyrics about {topic}.", "Write a {writing} about {topic}.",
      "Can you help me draft a {writing} for {person}?", "Compose an engaging {writing} about a trip to {place}.", "I need a catchy {writing} for our launch in {place}.",
    ],
    zh: [
      "写一首关于{zhTopic}的{zhForm}", "以{zhTopic}为题写一篇{zhForm}", "帮我写个关于{zhTopic}的故事", "给孩子讲一个关于{zhTopic}的睡前故事", "创作一段关于{zhTopic}的{zhForm}",
      "帮我写一篇关于{zhTopic}的{zhWriting}", "给{zhPerson}写一封{zhWriting}", "假装你是一位{zhPerson}那样的侠客，讲讲你的冒险经历", "写一段发生在{zhPlace}的微小说，主角是{zhPerson}", "以{zhTopic}为主题作一首诗",
    ],
  },
  chitchat: {
    en: ["{greetEn}", "{greetEn}!", "{greetEn}, how are you?", "{smallTalkEn}", "{greetEn}! {smallTalkEn}", "thanks!", "thank you so much", "how's your day going?", "lol", "good night", "ok cool", "nice, thanks"],
    zh: ["{greetZh}", "{greetZh}！", "{greetZh}，最近怎么样？", "{smallTalkZh}", "{greetZh}，{smallTalkZh}", "谢谢！", "好的谢谢", "哈哈哈", "晚安", "你今天过得怎么样？", "嗯嗯好的"],
  },
};

/** Short buggy or plain code snippets for `{CODE}`; identifiers vary per use. */
export const CODE_SNIPPETS: readonly string[] = [
  "def fib(n):\n    if n <= 1:\n        return n\n    return fib(n - 1) + fib(n - 3)",
  "function {id}(arr) {\n  let total = 0;\n  for (let i = 0; i <= arr.length; i++) total += arr[i];\n  return total;\n}",
  "for i in range(len({id})):\n    if {id}[i] = target:\n        return i",
  "SELECT name, COUNT(*) FROM orders GROUP BY customer_id",
  "public int {id}(int[] a) { int m = 0; for (int x : a) if (x > m) m = x; return m; }",
  "const {id} = async (url) => { const r = fetch(url); return r.json(); }",
  "fn {id}(v: Vec<i32>) -> i32 { v.iter().sum() }",
  "while True:\n    line = input()\n    {id}.append(line)",
  "#include <stdio.h>\nint main() { int {id}[10]; printf(\"%d\", {id}[10]); }",
  "def {id}(s):\n    return s == s.reverse()",
];
