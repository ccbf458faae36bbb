/**
 * The pattern layer: precompiled English and Chinese regular expressions that recognise a task
 * when the prompt names it outright ("summarize…", "翻译成英文", a code fence, "37*41"). Rules
 * are tried in order and the first hit wins, so the more specific rules come first (writing a
 * function that extracts emails is code, not entity extraction). Each rule carries the score it
 * reports; every rule here is meant to be high-precision, and anything vaguer is the model's job.
 * Rules see the lowercased text, so their patterns are lowercase and carry no `i` flag.
 */
import type { Intent } from "./intents.ts";

export interface KeywordHit {
  intent: Intent;
  score: number;
}

interface Rule {
  intent: Intent;
  score: number;
  re: RegExp;
  /** Skip the rule unless the text has a CJK character / an ASCII letter (every match needs one). */
  needs?: "cjk" | "latin";
  /** Only texts up to this many characters (greetings are short). */
  maxLength?: number;
}

const LANGS = "python|javascript|typescript|java|c\\+\\+|c#|c|go|golang|rust|ruby|php|kotlin|swift|scala|sql|bash|shell|powershell|haskell|lua|perl|r|matlab|dart|html|css|js|ts|node(?:\\.js)?|react";
const CODE_THINGS = "functions?|class(?:es)?|methods?|programs?|scripts?|code|algorithms?|regex|regular expressions?|sql quer(?:y|ies)|unit tests?|api endpoints?|data structures?|implementation|snippet|cli|bash one-liner";
const HUMAN_LANGS = "english|french|german|spanish|chinese|mandarin|cantonese|japanese|korean|italian|russian|portuguese|arabic|hindi|dutch|swedish|turkish|vietnamese|thai|polish|greek|hebrew|latin|indonesian";
const ZH_LANGS = "英语|英文|中文|汉语|日语|日文|法语|德语|西班牙语|韩语|俄语|意大利语|葡萄牙语|阿拉伯语|粤语|文言文";

const P = "[\\s,.!?~:;()'\"，。！？～、…啊呀呢吧哦嘛]*";
const EN_SMALL_TALK =
  "hi+|hello+|hey+|yo|howdy|hiya|greetings|good (?:morning|afternoon|evening|night)|how are you(?: doing)?(?: today)?|how's it going|how is it going|how have you been|what's up|sup|thanks?(?: you)?(?: so much| a lot)?|thx|bye|goodbye|see you(?: later)?|nice to meet you|who are you|what's your name|what is your name|lol|haha+|good job|well done|i'm bored|you're funny";
const ZH_SMALL_TALK = "你好|您好|嗨|哈喽|哈啰|早上好|早安|中午好|下午好|晚上好|晚安|谢谢你?|多谢|感谢|在吗|在不在|拜拜|再见|你是谁|你叫什么名字?|你好吗|最近怎么样|最近好吗|吃了吗|哈哈+|辛苦了|好无聊";

const WRITING = "blog post|essay|article|speech|(?:cover |formal |resignation |recommendation |apology |love )?letter|letter of recommendation|e-?mail|(?:movie |book |film |concert |product )?review|announcement|tweet|slogan|toast|eulogy|newsletter|press release|ad copy|product description|wedding vows|podcast script";

const RULES: readonly Rule[] = [
  // creative_writing that names a "script" (not code) comes before the code rules
  { intent: "creative_writing", score: 0.9, needs: "latin", re: /\b(?:script|screenplay) for (?:an?|the|my) (?:youtube|podcast|video|play|movie|film|commercial|tv|radio|episode|short film|presentation|skit)\b|\bpodcast script\b/ },
  // code_gen: an explicit request to write or fix code.
  { intent: "code_gen", score: 0.97, needs: "latin", re: new RegExp(`\\b(?:write|implement|create|build|code|develop|generate|fix|debug|refactor|optimi[sz]e|port|convert)\\b[^.?!\\n]{0,50}?\\b(?:${CODE_THINGS})\\b`) },
  { intent: "code_gen", score: 0.95, needs: "latin", re: new RegExp(`\\b(?:write|implement|code|program)\\b[^.?!\\n]{0,30}\\b(?:in|using) (?:${LANGS})\\b`) },
  { intent: "code_gen", score: 0.95, needs: "cjk", re: new RegExp(`(?:实现|编写|写|生成|修复|重构|优化)(?:一个|一段|个|下)?[^，。？！\\n]{0,20}?(?:函数|代码|程序|脚本|算法|类|接口|正则表达式|sql|单元测试)|用(?:${LANGS})(?:语言)?(?:写|实现|编写)`) },
  { intent: "code_gen", score: 0.9, re: /(?:修复|调试|解决)[^，。？！\n]{0,12}(?:bug|报错|异常)|\b(?:fix|find) (?:the|this) bugs?\b|\bwhy does (?:this|my) code\b/ },
  // summarize
  { intent: "summarize", score: 0.95, needs: "latin", re: /\b(?:summari[sz]e|summari[sz]ation|summary|tl;?dr|sum (?:it |this |that )?up|recap|key takeaways|main points|gist of)\b/ },
  { intent: "summarize", score: 0.95, needs: "cjk", re: /总结|概括|摘要|归纳(?:一下|要点|主要)|提炼.{0,6}(?:要点|重点|核心)|主要内容是什么|一句话说明/ },
  // translate
  { intent: "translate", score: 0.97, needs: "latin", re: /\btranslat(?:e|ed|ion|ing)\b(?![^.?!\n]{0,40}\b(?:predicate logic|formula|symbolic logic|into logic))/ },
  { intent: "translate", score: 0.93, needs: "latin", re: new RegExp(`\\bhow (?:do|would|can) (?:you|i) say\\b.{1,80}\\bin (?:${HUMAN_LANGS})\\b|\\b(?:put|render|convert) (?:this|it|the following)(?: text| sentence)? into (?:${HUMAN_LANGS})\\b`) },
  { intent: "translate", score: 0.97, needs: "cjk", re: new RegExp(`翻译|翻成|译成|译为|(?:用|换成|改成)(?:${ZH_LANGS})(?:怎么说|表达|说)|(?:${ZH_LANGS})怎么说`) },
  // extract_entity
  { intent: "extract_entity", score: 0.93, needs: "latin", re: /\bextract(?:ing)?\b[^.?!\n]{0,40}\b(?:names?|entit(?:y|ies)|dates?|keywords?|key ?phrases|fields?|information|info|details|data|values|emails?|numbers|addresses|locations|people|organi[sz]ations|companies|amounts|skills|mentions|(?:from|in) (?:the |this |these |each )?(?:following|below|text|passage|paragraph|sentence|email|document|article|message|resume|review|invoice|contract|transcript|conversation|page|table)s?)\b|\bnamed entit(?:y|ies)\b|\bpull out (?:all|every)\b/ },
  { intent: "extract_entity", score: 0.9, needs: "latin", re: /\b(?:list|find|identify|get)\b.{0,25}\b(?:names|dates|entities|locations|people|persons|organi[sz]ations|companies|emails?|email addresses|phone numbers|addresses|amounts|places|prices)\b.{0,40}\b(?:mentioned|in (?:the|this) (?:text|following|passage|paragraph|sentence|email|document|article|message)|from (?:the|this|below))\b/ },
  { intent: "extract_entity", score: 0.93, needs: "cjk", re: /提取(?!住房|公积金|现金|存款|养老金)|抽取(?!血|样)|命名实体|(?:找出|识别出?|列出)[^。？！\n]{0,15}(?:人名|地名|机构名?|公司名|日期|时间|金额|实体|电话号码|邮箱|组织)/ },
  // intent_classify
  { intent: "intent_classify", score: 0.93, needs: "latin", re: /\b(?:classify|categori[sz]e|which (?:category|class|label)|what (?:category|class|label)|(?:detect|identify|determine|what is) the (?:user'?s )?intent|intent of (?:this|the|that)|sentiment of|label (?:this|the following|each))\b/ },
  { intent: "intent_classify", score: 0.92, needs: "cjk", re: /(?<!示)意图|(?:进行|做|帮我|请|对).{0,20}分类|分类(?:一下|为|成|到)|归类|属于哪(?:一|个)?(?:类|种类别|个类别)|(?:判断|识别).{0,10}(?:类别|情感|情绪倾向)/ },
  // rewrite
  { intent: "rewrite", score: 0.93, needs: "latin", re: /\b(?:rewrite|re-write|rephrase|paraphrase|reword|polish|proofread|copy-?edit|make (?:this|it|the following) (?:more|less|sound)|improve the (?:wording|writing|flow|grammar)|fix (?:the |my )?(?:grammar|spelling|typos))\b/ },
  { intent: "rewrite", score: 0.93, needs: "cjk", re: /润色|改写|重写|重新表述|换个说法|换一种说法|改得更|修改.{0,6}(?:语句|措辞|句子|病句|语法)|优化.{0,6}(?:文案|表达|措辞|这段话)|改成.{0,4}(?:正式|口语|礼貌)/ },
  // code by its syntax (after the instruction rules: "summarize this code" stays summarize)
  { intent: "code_gen", score: 0.9, re: /```|^\s*(?:def \w+\(|class \w+[:(]|import \w+|from [\w.]+ import|#include|public (?:static )?(?:class|void)|function\s+\w+\s*\(|const \w+ = (?:\(|async)|fn \w+\(|func \w+\()|traceback \(most recent call last\)|\b(?:typeerror|syntaxerror|nullpointerexception|segmentation fault)\b/m },
  // math: an expression or an equation, or a math verb with numbers
  { intent: "math", score: 0.92, re: /^[\s\d.,()+\-*/×÷^=%x?]*\d\s*(?:[+*/×÷^]|\s-\s)\s*\(?\d[\s\d.,()+\-*/×÷^=%?]*$|\bwhat(?:'s| is)\s+-?\d+(?:\.\d+)?\s*(?:[+*/×÷^x]|\s-|times|plus|minus|divided by|to the power of)\s*\(?-?\d/ },
  { intent: "math", score: 0.9, re: /\b(?:solve|calculate|compute|evaluate|simplify|integrate|differentiate|factori[sz]e)\b[^.?!\n]{0,60}(?:\d|\b[xyz]\b)|\b(?:derivative|integral|equation|inequality)\b[^.?!\n]{0,40}[=^]|\d\s*[a-z]\s*[+-]\s*\d+\s*=/ },
  { intent: "math", score: 0.88, re: /\b[a-z]\([a-z]\)\s*=\s*[^\n]{0,40}[a-z0-9^]|\b(?:length|area|perimeter|slope|midpoint|distance)\b[^.?!\n]{0,60}\(-?\d+(?:\.\d+)?,\s*-?\d+(?:\.\d+)?\)|\(-?\d+(?:\.\d+)?,\s*-?\d+(?:\.\d+)?\)[^.?!\n]{0,80}\b(?:length|distance|slope|midpoint)\b/ },
  { intent: "math", score: 0.9, re: /(?:计算(?!机)|求解|解方程|算一下|等于多少|求导|积分|化简)[^。！\n]{0,40}[\d一二三四五六七八九十百千万xyz]|\d\s*[+*/×÷^]\s*\d[^。！\n]{0,10}(?:等于|=\s*[?？])/ },
  // creative_writing
  { intent: "creative_writing", score: 0.93, needs: "latin", re: /\b(?:write|compose|draft|create|pen|tell me)\b[^.?!\n]{0,30}?\b(?:story|stories|poem|poetry|haiku|sonnet|limerick|song|lyrics|fable|fairy tale|screenplay|novel|rap|verse|ballad|ode|short fiction|bedtime story)\b/ },
  { intent: "creative_writing", score: 0.93, needs: "cjk", re: /写(?:一|个|首|篇|段|几句)?[^，。？！\n]{0,12}(?:诗|故事|小说|歌词|散文|剧本|童话|对联|寓言|情书)|作(?:一)?首.{0,6}诗/ },
  { intent: "creative_writing", score: 0.88, needs: "latin", re: new RegExp(`\\b(?:write|compose|draft|pen|structure)\\b[^.?!\\n]{0,40}?\\b(?:${WRITING})s?\\b`) },
  { intent: "creative_writing", score: 0.88, needs: "cjk", re: /写(?:一|个|篇|封|段|份)?[^，。？！\n]{0,10}(?:文章|邮件|演讲稿|信|博客|文案|作文|影评|书评|新闻稿|祝酒词|求职信|推荐信|广告词|口号)/ },
  { intent: "creative_writing", score: 0.85, needs: "latin", re: /^(?:pretend (?:to be|you are)|imagine (?:you are|you're)|you are an? [^.?!\n]{1,80}\. (?:describe|tell)|as an? [a-z][^,\n]{1,40}, (?:how|what|describe|tell)|if you were an? [^,?\n]{1,40}, how would you)|\bintroduce yourself as an? / },
  // multi_hop_reasoning: explicit multi-step requests
  { intent: "multi_hop_reasoning", score: 0.88, needs: "latin", re: /\bstep[- ]by[- ]step\b|\bthink (?:it )?through\b|\bchain of (?:thought|reasoning)\b|\bcompare\b.{1,80}\band\b.{1,80}\bthen\b|\bfirst\b.{1,80}\bthen\b.{1,80}\b(?:finally|and then|after that)\b/ },
  { intent: "multi_hop_reasoning", score: 0.85, needs: "latin", re: /^what (?:if|would have happened if)\b[^?\n]{3,150}\b(?:had|hadn't|never|were|weren't)\b/ },
  { intent: "multi_hop_reasoning", score: 0.85, needs: "cjk", re: /^(?:假如|如果|要是|假设)[^？?\n]{2,40}(?:没有|不曾|从未|没能)[^？?\n]{0,30}(?:会怎样|会怎么样|会有什么不同|世界会|历史会)/ },
  { intent: "multi_hop_reasoning", score: 0.88, needs: "cjk", re: /首先.{1,60}然后|一步一步|一步步|逐步(?:推理|分析|推导)|分步(?:骤)?(?:推理|分析|思考)|推理过程/ },
  // chitchat: a message that is nothing but greetings and small talk
  { intent: "chitchat", score: 0.92, maxLength: 80, needs: "latin", re: new RegExp(`^${P}(?:${EN_SMALL_TALK})(?:[\\s,]+(?:there|friend|buddy|bot|assistant|everyone|again|mate|man))?(?:${P}(?:${EN_SMALL_TALK}))?${P}$`) },
  { intent: "chitchat", score: 0.92, maxLength: 40, needs: "cjk", re: new RegExp(`^${P}(?:${ZH_SMALL_TALK})(?:${P}(?:${ZH_SMALL_TALK}))?${P}$`) },
];

/** How much of a long prompt the patterns read: its head and its tail. */
export const KEYWORD_HEAD = 600;
export const KEYWORD_TAIL = 200;

const HAS_CJK = /[\u3400-\u9fff\uf900-\ufaff]/;
const HAS_LATIN = /[a-z]/;

/**
 * The first rule that matches `text`, or `undefined`. The caller passes the text it wants
 * checked (the last user message, or the system prompt); nothing is allocated on a miss.
 */
export function matchKeywords(text: string): KeywordHit | undefined {
  // Instructions sit at the start or the end of a prompt; a long pasted middle is not scanned.
  const lower = (text.length <= KEYWORD_HEAD + KEYWORD_TAIL ? text : `${text.slice(0, KEYWORD_HEAD)}\n${text.slice(-KEYWORD_TAIL)}`).toLowerCase();
  const cjk = HAS_CJK.test(lower);
  const latin = HAS_LATIN.test(lower);
  for (const rule of RULES) {
    if (rule.maxLength !== undefined && lower.length > rule.maxLength) continue;
    if ((rule.needs === "cjk" && !cjk) || (rule.needs === "latin" && !latin)) continue;
    if (rule.re.test(lower)) return { intent: rule.intent, score: rule.score };
  }
  return undefined;
}
