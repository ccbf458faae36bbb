/**
 * The pattern layer: precompiled English and Chinese regular expressions that recognise a task
 * when the prompt names it outright ("summarize…", "翻译成英文", a code fence, "37*41"). Rules
 * are tried in order and the first hit wins, so the more specific rules come first (writing a
 * function that extracts emails is code, not entity extraction). Each rule carries the score it
 * reports; every rule here is meant to be high-precision, and anything vaguer is the model's job.
 * Rules see the lowercased text, so their patterns are lowercase and carry no `i` flag.
 *
 * Rules read the shared text pass (`../text.ts`): instructions sit at the start or the end of a
 * prompt, so only the head and tail of a long one are read. Each rule is gated by what its
 * pattern cannot match without: whole words (for each group, one of its words), a CJK character,
 * an ASCII letter, a digit or a given character; a pattern runs only on prompts that hold its
 * trigger words. A gate never changes a result, it only skips patterns that would fail.
 */
import type { Intent } from "./intents.ts";
import { LEXICON, type TextView, analyseText, isSpace } from "../text.ts";

export interface KeywordHit {
  intent: Intent;
  score: number;
}

/** A CJK character, an ASCII letter, a digit, or one ASCII character. */
type Need = "cjk" | "latin" | "digit" | "=" | "`" | "#";

interface Rule {
  intent: Intent;
  score: number;
  re: RegExp;
  /** For each group, the text must have one of its words (whole `\b` words) for `re` to match. */
  words?: readonly (readonly string[])[];
  /** What else `re` cannot match without. */
  needs?: readonly Need[];
  /** Only texts up to this many characters (greetings are short). */
  maxLength?: number;
  /** `re` is anchored at a line start: its words count only where they begin a line. */
  lineStart?: boolean;
}

/** Space-separated words, for the `words` groups. */
const w = (list: string): readonly string[] => list.split(" ");

const LANGS =
  "python|javascript|typescript|java|c\\+\\+|c#|c|go|golang|rust|ruby|php|kotlin|swift|scala|sql|bash|shell|powershell|haskell|lua|perl|r|matlab|dart|html|css|js|ts|node(?:\\.js)?|react";
const CODE_THINGS =
  "functions?|class(?:es)?|methods?|programs?|scripts?|code|algorithms?|regex|regular expressions?|sql quer(?:y|ies)|unit tests?|api endpoints?|data structures?|implementation|snippet|cli|bash one-liner";
const HUMAN_LANGS =
  "english|french|german|spanish|chinese|mandarin|cantonese|japanese|korean|italian|russian|portuguese|arabic|hindi|dutch|swedish|turkish|vietnamese|thai|polish|greek|hebrew|latin|indonesian";
const ZH_LANGS = "英语|英文|中文|汉语|日语|日文|法语|德语|西班牙语|韩语|俄语|意大利语|葡萄牙语|阿拉伯语|粤语|文言文";

const P = "[\\s,.!?~:;()'\"，。！？～、…啊呀呢吧哦嘛]*";
const EN_SMALL_TALK =
  "hi+|hello+|hey+|yo|howdy|hiya|greetings|good (?:morning|afternoon|evening|night)|how are you(?: doing)?(?: today)?|how's it going|how is it going|how have you been|what's up|sup|thanks?(?: you)?(?: so much| a lot)?|thx|bye|goodbye|see you(?: later)?|nice to meet you|who are you|what's your name|what is your name|lol|haha+|good job|well done|i'm bored|you're funny";
const ZH_SMALL_TALK =
  "你好|您好|嗨|哈喽|哈啰|早上好|早安|中午好|下午好|晚上好|晚安|谢谢你?|多谢|感谢|在吗|在不在|拜拜|再见|你是谁|你叫什么名字?|你好吗|最近怎么样|最近好吗|吃了吗|哈哈+|辛苦了|好无聊";

const WRITING =
  "blog post|essay|article|speech|(?:cover |formal |resignation |recommendation |apology |love )?letter|letter of recommendation|e-?mail|(?:movie |book |film |concert |product )?review|announcement|tweet|slogan|toast|eulogy|newsletter|press release|ad copy|product description|wedding vows|podcast script";

const CODE_VERBS = w("write implement create build code develop generate fix debug refactor optimize optimise port convert");
/** A word of each `CODE_THINGS` alternative. */
const CODE_THING_WORDS = w(
  "function functions class classes method methods program programs script scripts code algorithm algorithms regex regular sql unit api data implementation snippet cli bash",
);
/** A word every `WRITING` alternative (with its plural) contains. */
const WRITING_WORDS = w(
  "blog essay essays article articles speech speechs letter letters email emails mail mails review reviews announcement announcements tweet tweets slogan slogans toast toasts eulogy eulogys newsletter newsletters press ad product wedding podcast",
);

const RULES: readonly Rule[] = [
  // creative_writing that names a "script" (not code) comes before the code rules
  {
    intent: "creative_writing",
    score: 0.9,
    words: [w("script screenplay")],
    re: /\b(?:script|screenplay) for (?:an?|the|my) (?:youtube|podcast|video|play|movie|film|commercial|tv|radio|episode|short film|presentation|skit)\b|\bpodcast script\b/,
  },
  // code_gen: an explicit request to write or fix code.
  {
    intent: "code_gen",
    score: 0.97,
    words: [CODE_VERBS, CODE_THING_WORDS],
    re: new RegExp(
      `\\b(?:write|implement|create|build|code|develop|generate|fix|debug|refactor|optimi[sz]e|port|convert)\\b[^.?!\\n]{0,50}?\\b(?:${CODE_THINGS})\\b`,
    ),
  },
  {
    intent: "code_gen",
    score: 0.95,
    words: [w("write implement code program"), w("in using")],
    re: new RegExp(`\\b(?:write|implement|code|program)\\b[^.?!\\n]{0,30}\\b(?:in|using) (?:${LANGS})\\b`),
  },
  {
    intent: "code_gen",
    score: 0.95,
    needs: ["cjk"],
    re: new RegExp(
      `(?:实现|编写|写|生成|修复|重构|优化)(?:一个|一段|个|下)?[^，。？！\\n]{0,20}?(?:函数|代码|程序|脚本|算法|类|接口|正则表达式|sql|单元测试)|用(?:${LANGS})(?:语言)?(?:写|实现|编写)`,
    ),
  },
  { intent: "code_gen", score: 0.9, needs: ["cjk"], re: /(?:修复|调试|解决)[^，。？！\n]{0,12}(?:bug|报错|异常)/ },
  { intent: "code_gen", score: 0.9, words: [w("fix find"), w("bug bugs")], re: /\b(?:fix|find) (?:the|this) bugs?\b/ },
  { intent: "code_gen", score: 0.9, words: [w("why"), w("code")], re: /\bwhy does (?:this|my) code\b/ },
  // summarize
  {
    intent: "summarize",
    score: 0.95,
    words: [w("summarize summarise summarization summarisation summary tl tldr sum recap key main gist")],
    re: /\b(?:summari[sz]e|summari[sz]ation|summary|tl;?dr|sum (?:it |this |that )?up|recap|key takeaways|main points|gist of)\b/,
  },
  { intent: "summarize", score: 0.95, needs: ["cjk"], re: /总结|概括|摘要|归纳(?:一下|要点|主要)|提炼.{0,6}(?:要点|重点|核心)|主要内容是什么|一句话说明/ },
  // translate
  {
    intent: "translate",
    score: 0.97,
    words: [w("translate translated translation translating")],
    re: /\btranslat(?:e|ed|ion|ing)\b(?![^.?!\n]{0,40}\b(?:predicate logic|formula|symbolic logic|into logic))/,
  },
  {
    intent: "translate",
    score: 0.93,
    words: [w("how"), w("say"), w("in")],
    re: new RegExp(`\\bhow (?:do|would|can) (?:you|i) say\\b.{1,80}\\bin (?:${HUMAN_LANGS})\\b`),
  },
  {
    intent: "translate",
    score: 0.93,
    words: [w("put render convert"), w("into")],
    re: new RegExp(`\\b(?:put|render|convert) (?:this|it|the following)(?: text| sentence)? into (?:${HUMAN_LANGS})\\b`),
  },
  {
    intent: "translate",
    score: 0.97,
    needs: ["cjk"],
    re: new RegExp(`翻译|翻成|译成|译为|(?:用|换成|改成)(?:${ZH_LANGS})(?:怎么说|表达|说)|(?:${ZH_LANGS})怎么说`),
  },
  // extract_entity
  {
    intent: "extract_entity",
    score: 0.93,
    words: [w("extract extracting named pull")],
    re: /\bextract(?:ing)?\b[^.?!\n]{0,40}\b(?:names?|entit(?:y|ies)|dates?|keywords?|key ?phrases|fields?|information|info|details|data|values|emails?|numbers|addresses|locations|people|organi[sz]ations|companies|amounts|skills|mentions|(?:from|in) (?:the |this |these |each )?(?:following|below|text|passage|paragraph|sentence|email|document|article|message|resume|review|invoice|contract|transcript|conversation|page|table)s?)\b|\bnamed entit(?:y|ies)\b|\bpull out (?:all|every)\b/,
  },
  {
    intent: "extract_entity",
    score: 0.9,
    words: [
      w("list find identify get"),
      w("names dates entities locations people persons organizations organisations companies email emails phone addresses amounts places prices"),
      w("mentioned in from"),
    ],
    re: /\b(?:list|find|identify|get)\b.{0,25}\b(?:names|dates|entities|locations|people|persons|organi[sz]ations|companies|emails?|email addresses|phone numbers|addresses|amounts|places|prices)\b.{0,40}\b(?:mentioned|in (?:the|this) (?:text|following|passage|paragraph|sentence|email|document|article|message)|from (?:the|this|below))\b/,
  },
  {
    intent: "extract_entity",
    score: 0.93,
    needs: ["cjk"],
    re: /提取(?!住房|公积金|现金|存款|养老金)|抽取(?!血|样)|命名实体|(?:找出|识别出?|列出)[^。？！\n]{0,15}(?:人名|地名|机构名?|公司名|日期|时间|金额|实体|电话号码|邮箱|组织)/,
  },
  // intent_classify
  {
    intent: "intent_classify",
    score: 0.93,
    words: [w("classify categorize categorise category class label intent sentiment")],
    re: /\b(?:classify|categori[sz]e|which (?:category|class|label)|what (?:category|class|label)|(?:detect|identify|determine|what is) the (?:user'?s )?intent|intent of (?:this|the|that)|sentiment of|label (?:this|the following|each))\b/,
  },
  {
    intent: "intent_classify",
    score: 0.92,
    needs: ["cjk"],
    re: /(?<!示)意图|(?:进行|做|帮我|请|对).{0,20}分类|分类(?:一下|为|成|到)|归类|属于哪(?:一|个)?(?:类|种类别|个类别)|(?:判断|识别).{0,10}(?:类别|情感|情绪倾向)/,
  },
  // rewrite
  {
    intent: "rewrite",
    score: 0.93,
    words: [w("rewrite re rephrase paraphrase reword polish proofread copy copyedit make improve fix")],
    re: /\b(?:rewrite|re-write|rephrase|paraphrase|reword|polish|proofread|copy-?edit|make (?:this|it|the following) (?:more|less|sound)|improve the (?:wording|writing|flow|grammar)|fix (?:the |my )?(?:grammar|spelling|typos))\b/,
  },
  {
    intent: "rewrite",
    score: 0.93,
    needs: ["cjk"],
    re: /润色|改写|重写|重新表述|换个说法|换一种说法|改得更|修改.{0,6}(?:语句|措辞|句子|病句|语法)|优化.{0,6}(?:文案|表达|措辞|这段话)|改成.{0,4}(?:正式|口语|礼貌)/,
  },
  // code by its syntax (after the instruction rules: "summarize this code" stays summarize)
  { intent: "code_gen", score: 0.9, needs: ["`"], re: /```/ },
  {
    intent: "code_gen",
    score: 0.9,
    words: [w("def class import from public function const fn func")],
    lineStart: true,
    re: /^\s*(?:def \w+\(|class \w+[:(]|import \w+|from [\w.]+ import|public (?:static )?(?:class|void)|function\s+\w+\s*\(|const \w+ = (?:\(|async)|fn \w+\(|func \w+\()/m,
  },
  { intent: "code_gen", score: 0.9, needs: ["#"], re: /^\s*#include/m },
  { intent: "code_gen", score: 0.9, words: [w("recent"), w("last")], re: /traceback \(most recent call last\)/ },
  {
    intent: "code_gen",
    score: 0.9,
    words: [w("typeerror syntaxerror nullpointerexception segmentation")],
    re: /\b(?:typeerror|syntaxerror|nullpointerexception|segmentation fault)\b/,
  },
  // math: an expression or an equation, or a math verb with numbers
  { intent: "math", score: 0.92, needs: ["digit"], re: /^[\s\d.,()+\-*/×÷^=%x?]*\d\s*(?:[+*/×÷^]|\s-\s)\s*\(?\d[\s\d.,()+\-*/×÷^=%?]*$/ },
  {
    intent: "math",
    score: 0.92,
    words: [w("what")],
    needs: ["digit"],
    re: /\bwhat(?:'s| is)\s+-?\d+(?:\.\d+)?\s*(?:[+*/×÷^x]|\s-|times|plus|minus|divided by|to the power of)\s*\(?-?\d/,
  },
  {
    intent: "math",
    score: 0.9,
    words: [w("solve calculate compute evaluate simplify integrate differentiate factorize factorise")],
    re: /\b(?:solve|calculate|compute|evaluate|simplify|integrate|differentiate|factori[sz]e)\b[^.?!\n]{0,60}(?:\d|\b[xyz]\b)/,
  },
  {
    intent: "math",
    score: 0.9,
    words: [w("derivative integral equation inequality")],
    re: /\b(?:derivative|integral|equation|inequality)\b[^.?!\n]{0,40}[=^]/,
  },
  { intent: "math", score: 0.9, needs: ["digit", "="], re: /\d\s*[a-z]\s*[+-]\s*\d+\s*=/ },
  { intent: "math", score: 0.88, needs: ["="], re: /\b[a-z]\([a-z]\)\s*=\s*[^\n]{0,40}[a-z0-9^]/ },
  {
    intent: "math",
    score: 0.88,
    words: [w("length area perimeter slope midpoint distance")],
    needs: ["digit"],
    re: /\b(?:length|area|perimeter|slope|midpoint|distance)\b[^.?!\n]{0,60}\(-?\d+(?:\.\d+)?,\s*-?\d+(?:\.\d+)?\)|\(-?\d+(?:\.\d+)?,\s*-?\d+(?:\.\d+)?\)[^.?!\n]{0,80}\b(?:length|distance|slope|midpoint)\b/,
  },
  {
    intent: "math",
    score: 0.9,
    needs: ["cjk"],
    re: /(?:计算(?!机)|求解|解方程|算一下|等于多少|求导|积分|化简)[^。！\n]{0,40}[\d一二三四五六七八九十百千万xyz]/,
  },
  { intent: "math", score: 0.9, needs: ["digit"], re: /\d\s*[+*/×÷^]\s*\d[^。！\n]{0,10}(?:等于|=\s*[?？])/ },
  // creative_writing
  {
    intent: "creative_writing",
    score: 0.93,
    words: [
      w("write compose draft create pen tell"),
      w("story stories poem poetry haiku sonnet limerick song lyrics fable fairy screenplay novel rap verse ballad ode short bedtime"),
    ],
    re: /\b(?:write|compose|draft|create|pen|tell me)\b[^.?!\n]{0,30}?\b(?:story|stories|poem|poetry|haiku|sonnet|limerick|song|lyrics|fable|fairy tale|screenplay|novel|rap|verse|ballad|ode|short fiction|bedtime story)\b/,
  },
  {
    intent: "creative_writing",
    score: 0.93,
    needs: ["cjk"],
    re: /写(?:一|个|首|篇|段|几句)?[^，。？！\n]{0,12}(?:诗|故事|小说|歌词|散文|剧本|童话|对联|寓言|情书)|作(?:一)?首.{0,6}诗/,
  },
  {
    intent: "creative_writing",
    score: 0.88,
    words: [w("write compose draft pen structure"), WRITING_WORDS],
    re: new RegExp(`\\b(?:write|compose|draft|pen|structure)\\b[^.?!\\n]{0,40}?\\b(?:${WRITING})s?\\b`),
  },
  {
    intent: "creative_writing",
    score: 0.88,
    needs: ["cjk"],
    re: /写(?:一|个|篇|封|段|份)?[^，。？！\n]{0,10}(?:文章|邮件|演讲稿|信|博客|文案|作文|影评|书评|新闻稿|祝酒词|求职信|推荐信|广告词|口号)/,
  },
  {
    intent: "creative_writing",
    score: 0.85,
    words: [w("pretend imagine you as if")],
    re: /^(?:pretend (?:to be|you are)|imagine (?:you are|you're)|you are an? [^.?!\n]{1,80}\. (?:describe|tell)|as an? [a-z][^,\n]{1,40}, (?:how|what|describe|tell)|if you were an? [^,?\n]{1,40}, how would you)/,
  },
  { intent: "creative_writing", score: 0.85, words: [w("introduce"), w("yourself")], re: /\bintroduce yourself as an? / },
  // multi_hop_reasoning: explicit multi-step requests
  {
    intent: "multi_hop_reasoning",
    score: 0.88,
    words: [w("step think chain")],
    re: /\bstep[- ]by[- ]step\b|\bthink (?:it )?through\b|\bchain of (?:thought|reasoning)\b/,
  },
  {
    intent: "multi_hop_reasoning",
    score: 0.88,
    words: [w("compare first"), w("then")],
    re: /\bcompare\b.{1,80}\band\b.{1,80}\bthen\b|\bfirst\b.{1,80}\bthen\b.{1,80}\b(?:finally|and then|after that)\b/,
  },
  {
    intent: "multi_hop_reasoning",
    score: 0.85,
    words: [w("what")],
    re: /^what (?:if|would have happened if)\b[^?\n]{3,150}\b(?:had|hadn't|never|were|weren't)\b/,
  },
  {
    intent: "multi_hop_reasoning",
    score: 0.85,
    needs: ["cjk"],
    re: /^(?:假如|如果|要是|假设)[^？?\n]{2,40}(?:没有|不曾|从未|没能)[^？?\n]{0,30}(?:会怎样|会怎么样|会有什么不同|世界会|历史会)/,
  },
  {
    intent: "multi_hop_reasoning",
    score: 0.88,
    needs: ["cjk"],
    re: /首先.{1,60}然后|一步一步|一步步|逐步(?:推理|分析|推导)|分步(?:骤)?(?:推理|分析|思考)|推理过程/,
  },
  // chitchat: a message that is nothing but greetings and small talk
  {
    intent: "chitchat",
    score: 0.92,
    maxLength: 80,
    needs: ["latin"],
    re: new RegExp(`^${P}(?:${EN_SMALL_TALK})(?:[\\s,]+(?:there|friend|buddy|bot|assistant|everyone|again|mate|man))?(?:${P}(?:${EN_SMALL_TALK}))?${P}$`),
  },
  { intent: "chitchat", score: 0.92, maxLength: 40, needs: ["cjk"], re: new RegExp(`^${P}(?:${ZH_SMALL_TALK})(?:${P}(?:${ZH_SMALL_TALK}))?${P}$`) },
];

/** The bit of each need in a need mask. */
const NEED_BIT: Readonly<Record<Need, number>> = { cjk: 1, latin: 2, digit: 4, "=": 8, "`": 16, "#": 32 };

/** A rule as the matcher runs it: the same object shape for every rule, needs as a bit mask. */
interface GatedRule {
  intent: Intent;
  score: number;
  re: RegExp;
  maxLength: number;
  needs: number;
  /** Its word groups, numbered (`seen` holds one flag per group). */
  groups: readonly number[];
}

/** Each gate word's `LEXICON` id → the groups it is in. */
const GROUPS_BY_ID: number[][] = [];
/** Per group, 1 if its words count only at a line start. */
const lineStartGroups: number[] = [];

const GATED: readonly GatedRule[] = RULES.map((rule) => {
  const groups = (rule.words ?? []).map((words) => {
    const group = lineStartGroups.length;
    lineStartGroups.push(rule.lineStart === true ? 1 : 0);
    for (const word of words) (GROUPS_BY_ID[LEXICON.add(word)] ??= []).push(group);
    return group;
  });
  const needs = (rule.needs ?? []).reduce((mask, need) => mask | NEED_BIT[need], 0);
  return { intent: rule.intent, score: rule.score, re: rule.re, maxLength: rule.maxLength ?? Infinity, needs, groups };
});

const LINE_START = Uint8Array.from(lineStartGroups);
const seen = new Uint8Array(LINE_START.length);

/** Whether unit `u` comes first on its line, after spaces: where `^\s*` of a multiline pattern can reach it. */
function startsLine(view: TextView, u: number): boolean {
  for (let i = (view.starts[u] ?? 0) - 1; i >= 0; i--) {
    const c = view.lower.charCodeAt(i);
    if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) return true;
    if (!isSpace(c)) return false;
  }
  return true;
}

/** Marks the gate groups whose words the text has. */
function markWords(view: TextView): void {
  seen.fill(0);
  const ids = view.wordIds();
  for (let u = 0; u < view.units; u++) {
    const id = ids[u] ?? -1;
    // Reading only inside the array keeps the access fast.
    const groups = id >= 0 && id < GROUPS_BY_ID.length ? GROUPS_BY_ID[id] : undefined;
    if (groups === undefined) continue;
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g] ?? 0;
      if (LINE_START[group] === 0 || startsLine(view, u)) seen[group] = 1;
    }
  }
}

function hasChar(view: TextView, char: string): boolean {
  return (view.latin1[char.charCodeAt(0)] ?? 0) > 0;
}

/** The needs the text meets, as a mask. */
function needsMet(view: TextView): number {
  return (
    (view.cjk > 0 ? NEED_BIT.cjk : 0) |
    (view.letters > 0 ? NEED_BIT.latin : 0) |
    (view.numbers > 0 ? NEED_BIT.digit : 0) |
    (hasChar(view, "=") ? NEED_BIT["="] : 0) |
    (hasChar(view, "`") ? NEED_BIT["`"] : 0) |
    (hasChar(view, "#") ? NEED_BIT["#"] : 0)
  );
}

/** Whether `rule` can match the text: its length limit, its needs and its word groups. */
function gateOpen(rule: GatedRule, view: TextView, met: number): boolean {
  if (view.lower.length > rule.maxLength || (rule.needs & ~met) !== 0) return false;
  const groups = rule.groups;
  for (let g = 0; g < groups.length; g++) if (seen[groups[g] ?? 0] === 0) return false;
  return true;
}

/**
 * The first rule that matches `text`, or `undefined`. The caller passes the text it wants
 * checked (the last user message, or the system prompt).
 */
export function matchKeywords(text: string): KeywordHit | undefined {
  const view = analyseText(text);
  markWords(view);
  const met = needsMet(view);
  for (let r = 0; r < GATED.length; r++) {
    const rule = GATED[r] as GatedRule;
    if (gateOpen(rule, view, met) && rule.re.test(view.lower)) return { intent: rule.intent, score: rule.score };
  }
  return undefined;
}
