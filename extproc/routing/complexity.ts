/**
 * Complexity estimate of a chat request: a 0–1 score from text features, no model call, no I/O.
 * The heuristic routing layer sends a request to the edge when the score is under its cloud
 * threshold (0.7 by default).
 *
 * Each signal yields a strength in 0–1; a signal's weight is the most it can add on its own.
 * Signals combine as a noisy-OR, `score = 1 − Π(1 − weight·strength)`, so one strong signal
 * (a short question about a program's time complexity) lifts the score out of `low` by itself,
 * and several moderate ones add up without passing 1.
 *
 * | signal       | weight | strength from                                                          |
 * |--------------|--------|------------------------------------------------------------------------|
 * | length       | 0.50   | approximate tokens of every message (Latin chars/4, 1 per CJK char; a long message is counted on its head and tail and scaled to its length), log-scaled 30 → 0, 4000 → 1 |
 * | conversation | 0.35   | user turns beyond the first (6 more → 1) and cross-turn references ("as I said above", "上面", "刚才") |
 * | math         | 0.70   | operators between digits, equations, LaTeX, hard words ("prove", "derivative", "求导"), word problems (≥3 numbers and "how many/多少", more with step words "then/each/剩下") |
 * | code         | 0.65   | code fences, keywords, hard phrases ("time complexity", "bug", "refactor", "时间复杂度"), bracket density |
 * | reasoning    | 0.50   | "why", "explain", "compare", "step by step", "if … then", "为什么", "比较", "推理" |
 * | structure    | 0.40   | several questions, constraint lists (numbered or bulleted lines), "must", "at least", "不超过" |
 * | language     | 0.08   | mixed CJK and Latin text                                                 |
 *
 * Markers are read from user (and tool) messages only: a system prompt that says "explain"
 * does not make every request hard. Length counts every message, since the whole context has to
 * fit an edge model. Levels: low < 0.35 ≤ medium < 0.65 ≤ high.
 *
 * Markers come from the shared text pass (`text.ts`) over the user and tool text, which reads a
 * long text on its head and tail (its first 600 and last 200 characters): marker strengths
 * saturate long before a pasted middle would add to them. A long message's tokens are counted on
 * the same head and tail and scaled to its length.
 */
import type { Message } from "../../common/canonical/types.ts";
import { MarkerCounter } from "./markers.ts";
import { TEXT_HEAD, TEXT_TAIL, type TextView, analyseText, isCjk } from "./text.ts";
import { count, listItems, occurrences } from "./text-scan.ts";

export type ComplexityLevel = "low" | "medium" | "high";

export type ComplexitySignal = "length" | "conversation" | "math" | "code" | "reasoning" | "structure" | "language";

export const COMPLEXITY_WEIGHTS: Readonly<Record<ComplexitySignal, number>> = Object.freeze({
  length: 0.5,
  conversation: 0.35,
  math: 0.7,
  code: 0.65,
  reasoning: 0.5,
  structure: 0.4,
  language: 0.08,
});

/** Lower bounds of `medium` and `high`. */
export const COMPLEXITY_LEVELS = Object.freeze({ medium: 0.35, high: 0.65 });

export interface ComplexityFeatures {
  /** Approximate tokens over every message. */
  approxTokens: number;
  userTurns: number;
  crossTurnRefs: number;
  mathMarkers: number;
  codeMarkers: number;
  reasoningMarkers: number;
  questions: number;
  constraints: number;
  mixedLanguage: boolean;
  /** Strength (0–1) of each signal before weighting. */
  strengths: Record<ComplexitySignal, number>;
}

export interface ComplexityEstimate {
  score: number;
  level: ComplexityLevel;
  features: ComplexityFeatures;
}

export function complexityLevel(score: number): ComplexityLevel {
  if (score >= COMPLEXITY_LEVELS.high) return "high";
  if (score >= COMPLEXITY_LEVELS.medium) return "medium";
  return "low";
}

/**
 * Word markers, counted over the shared text pass (`markers.ts` says how an alternative is
 * written and matched). Each category's CJK alternatives are a separate pattern, run only when
 * the text has a CJK character. The counts are those of the global `\b(…)\b` patterns these
 * lists come from, but for `c++`, `o(n)`, `for (`, `while (` and `#include`, which count wherever
 * they occur: the patterns' closing `\b` after a symbol wanted a letter to follow.
 */
const WORD_MARKERS = new MarkerCounter({
  crossRef: [
    "as i {said|mentioned}",
    "{said|mentioned|discussed} {above|before|earlier}",
    "the previous",
    "previous {answer|message|one|reply}",
    "your {last|previous} {answer|reply|message}",
    "you {said|mentioned}",
    "earlier you",
    "above code",
    "the above",
  ],
  mathHard: [
    "prove",
    "proof",
    "derivative",
    "derive",
    "integral",
    "integrate",
    "theorem",
    "lemma",
    "limit of",
    "probability",
    "expected value",
    "eigen*",
    "matrix",
    "polynomial",
    "logarithm",
    "factorial",
    "permutation{|s}",
    "combination{|s}",
    "modulo",
    "prime number{|s}",
    "irrational",
    "differential",
    "gradient",
  ],
  mathSoft: ["calculate", "compute", "sum of", "average", "percent", "percentage", "ratio", "area", "volume", "speed", "km/h", "mph"],
  /** Words of `MATH_EQUATION`: with none of its symbols in the text, they are all it can match. */
  equation: ["solve*", "equation*"],
  quantityQuestion: ["how {many|much|far|long|fast|old}", "what time", "what is the {total|probability|value}"],
  multiStep: ["then", "after that", "remaining", "left over", "again", "each", "twice", "half", "times as {many|much}", "in total", "altogether"],
  codeKeyword: [
    "function",
    "def",
    "class",
    "return",
    "import",
    "const",
    "let",
    "var",
    "public static",
    "void",
    "async",
    "await",
    "lambda",
    "struct",
    "impl",
    "fn",
    { key: "include", re: /(?<=#)include\b/y },
    { key: "select", re: /select .+ from\b/y },
    "for (",
    "while (",
    "elif",
    "printf",
    "println",
    "console.log",
    "null pointer",
  ],
  codeHard: [
    "time complexity",
    "space complexity",
    "big{-| }o",
    "o(n{| log n|^2|²})",
    "refactor*",
    "bug{|s}",
    "debug*",
    "stack{ |}trace",
    "exception",
    "segfault",
    "segmentation fault",
    "race condition",
    "deadlock",
    "memory leak",
    "compile{|r|s}",
    "regex",
    "algorithm",
    "recursion",
    "recursive",
    "concurrenc*",
    "concurrent*",
    "implement*",
    "write {a|an|the} {function|program|script|class|method|query}",
    "unit test{|s}",
    "sql",
    "typescript",
    "javascript",
    "python",
    "java",
    "rust",
    "golang",
    "c++",
  ],
  codeSoft: ["code", "program", "function", "script", "api", "variable", "loop", "array"],
  reasoning: [
    "why",
    "explain*",
    "compare*",
    "comparison",
    "step{-| }by{-| }step",
    "reason*",
    "analys*",
    "analyz*",
    "pros and cons",
    "trade{-|}off{|s}",
    "difference between",
    "evaluate",
    "justify",
    "infer",
    "deduce",
    "implication{|s}",
    "what would happen",
    "cause",
    "consequence{|s}",
    { key: "if", re: /if\b[^.?!\n]{1,120}\b(?:then|would|will)\b/y },
  ],
  constraint: [
    "must",
    "at least",
    "at most",
    "no more than",
    "no less than",
    "without using",
    { key: "exactly", re: /exactly \d+\b/y },
    "make sure",
    "ensure",
    "constraint{|s}",
    "requirement{|s}",
  ],
});

type WordMarker = (typeof WORD_MARKERS.categories)[number];
const MARKER = WORD_MARKERS.index;

const CJK_MARKERS: Partial<Record<WordMarker, RegExp>> = {
  crossRef: /上面|上述|刚才|之前(说|提|的)|前面(说|提|的)|上一(个|条|轮|次)|你刚/g,
  mathHard: /证明|求导|导数|积分|微分|方程|概率|矩阵|多项式|极限|定理|排列|组合|质数|素数/g,
  mathSoft: /计算|平均|百分之|比例|面积|体积|速度/g,
  quantityQuestion: /多少|几(个|天|小时|点|岁|公里|次)|多久|多远/g,
  multiStep: /然后|之后|又|剩下|剩余|每人|每个|一共|总共|再/g,
  codeHard: /时间复杂度|空间复杂度|重构|调试|报错|异常|死锁|内存泄漏|算法|递归|并发|写(一个|个)?(函数|程序|脚本|类|方法)|单元测试/g,
  codeSoft: /代码|程序|函数|变量|数组/g,
  reasoning: /为什么|为何|比较|推理|分析|解释|原因|区别|优缺点|权衡|一步一步|逐步|如果[^。？！\n]{1,60}(那么|就|会)|推断|论证/g,
  constraint: /不超过|不少于|至少|至多|必须|不能|要求|限制|确保/g,
};

/** Each CJK pattern with its marker's index. */
const CJK_PATTERNS = (Object.entries(CJK_MARKERS) as [WordMarker, RegExp][]).map(([marker, pattern]) => ({ index: MARKER[marker], pattern }));

/** Word-marker counts by `MARKER` index, plus their CJK patterns when the text has CJK characters. */
function markerCounts(view: TextView): Int32Array {
  const counts = WORD_MARKERS.count(view);
  if (view.cjk > 0) for (const { index, pattern } of CJK_PATTERNS) counts[index] = (counts[index] ?? 0) + count(pattern, view.lower);
  return counts;
}

/** Character codes the structural patterns need. */
const CHAR = Object.freeze({
  equals: 61,
  caret: 94,
  squared: 0xb2,
  cubed: 0xb3,
  backslash: 92,
  dollar: 36,
  backtick: 96,
  greater: 62,
  minus: 45,
  colon: 58,
  semicolon: 59,
  closeParen: 41,
  question: 63,
});

/** Occurrences of a Latin-1 character (outside words) in the text's window. */
function occurs(view: TextView, code: number): number {
  return view.latin1[code] ?? 0;
}

// Structural patterns, each run only when the text has the characters it needs.
const MATH_OPERATOR = /\d\s*[-+*/×÷^%]\s*\(?\s*\d|\d\s*[=<>≤≥]\s*\d/g;
const MATH_EQUATION = /\b[a-z]\s*(\^\s*\d|²|³)|[a-z0-9)]\s*=\s*[-\d(a-z]|\b(solve|equation|equations|x\s*=)/g;
const LATEX = /\\(frac|sum|int|sqrt|prod|lim|alpha|beta|theta|pi|cdot|times|le|ge|infty|partial|begin)\b|\$[^$\n]{1,200}\$/g;
const CODE_OPERATOR = /=>|::|->|\);/g;
const BRACKETS = Array.from("();[]{}", (c) => c.charCodeAt(0));

/** Whether the text has what `CODE_OPERATOR` needs: `=>` or `->`, two colons, or `);`. */
function mayHaveCodeOperator(view: TextView): boolean {
  return (
    (occurs(view, CHAR.greater) > 0 && occurs(view, CHAR.equals) + occurs(view, CHAR.minus) > 0) ||
    occurs(view, CHAR.colon) >= 2 ||
    (occurs(view, CHAR.closeParen) > 0 && occurs(view, CHAR.semicolon) > 0)
  );
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

/** `1 − Π(1 − weight·strength)`. */
function noisyOr(s: Readonly<Record<ComplexitySignal, number>>): number {
  const w = COMPLEXITY_WEIGHTS;
  const keep =
    (1 - w.length * s.length) *
    (1 - w.conversation * s.conversation) *
    (1 - w.math * s.math) *
    (1 - w.code * s.code) *
    (1 - w.reasoning * s.reasoning) *
    (1 - w.structure * s.structure) *
    (1 - w.language * s.language);
  return 1 - keep;
}

interface TextStats {
  tokens: number;
  cjk: number;
  latinLetters: number;
}

/** Adds the counts of `text[start, end)`, times `scale`. */
function countRange(text: string, start: number, end: number, scale: number, into: TextStats): void {
  let other = 0;
  let cjk = 0;
  let letters = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c <= 32) continue;
    if (c >= 0x3040 && isCjk(c)) {
      cjk++;
    } else {
      other++;
      if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) letters++;
    }
  }
  into.tokens += (other / 4) * scale;
  into.cjk += cjk * scale;
  into.latinLetters += letters * scale;
}

/** How much longer a text is than the window the text pass reads of it (1 if it reads all). */
function windowScale(length: number): number {
  return length <= TEXT_HEAD + TEXT_TAIL ? 1 : length / (TEXT_HEAD + TEXT_TAIL);
}

/**
 * Approximate tokens (Latin non-space chars / 4, one per CJK char) and script counts of a
 * message. Like the markers, a long message is read on its head and tail, scaled to its length.
 */
function textStats(text: string, into: TextStats): void {
  const scale = windowScale(text.length);
  if (scale === 1) return countRange(text, 0, text.length, 1, into);
  countRange(text, 0, TEXT_HEAD, scale, into);
  countRange(text, text.length - TEXT_TAIL, text.length, scale, into);
}

/** `textStats` of the text a view read, from the counts of its pass. */
function viewStats(view: TextView, into: TextStats): void {
  const scale = windowScale(view.text.length);
  into.tokens += ((view.visible - view.cjk) / 4) * scale;
  into.cjk += view.cjk * scale;
  into.latinLetters += view.letters * scale;
}

function messageText(message: Message): string {
  const content = message.content;
  if (content === null) return "";
  if (typeof content === "string") return content;
  let text = "";
  for (const part of content) if (part.type === "text") text += (text === "" ? "" : "\n") + part.text;
  return text;
}

export function estimateComplexity(messages: readonly Message[]): ComplexityEstimate {
  let userTurns = 0;
  let marked = "";
  // Indexed loops: this function runs per request, and its iterators would allocate.
  for (let m = 0; m < messages.length; m++) {
    const message = messages[m] as Message;
    if (message.role === "user") userTurns++;
    if (message.role === "user" || message.role === "tool") marked += (marked === "" ? "" : "\n") + messageText(message);
  }
  // The trimmed text is the one the intent classifier reads, so the two share one text pass.
  const view = analyseText(marked.trim());
  const lower = view.lower;
  const stats: TextStats = { tokens: 0, cjk: 0, latinLetters: 0 };
  for (let m = 0; m < messages.length; m++) {
    const text = messageText(messages[m] as Message);
    // The message the pass read (the usual lone user message) is not read again.
    if (text === view.text) viewStats(view, stats);
    else textStats(text, stats);
  }
  const approxTokens = Math.round(stats.tokens + stats.cjk);
  const words = markerCounts(view);

  const crossTurnRefs = words[MARKER.crossRef] ?? 0;
  const numbers = view.numbers;
  const wordProblem = numbers >= 3 && (words[MARKER.quantityQuestion] ?? 0) > 0;
  const multiStep = wordProblem ? (words[MARKER.multiStep] ?? 0) : 0;
  const operators = numbers >= 2 ? count(MATH_OPERATOR, lower) : 0;
  const equationSymbols = occurs(view, CHAR.equals) + occurs(view, CHAR.caret) + occurs(view, CHAR.squared) + occurs(view, CHAR.cubed);
  const equations = equationSymbols > 0 ? count(MATH_EQUATION, lower) : (words[MARKER.equation] ?? 0);
  const mathHard = words[MARKER.mathHard] ?? 0;
  const mathSoft = words[MARKER.mathSoft] ?? 0;
  const latex = occurs(view, CHAR.backslash) + occurs(view, CHAR.dollar) > 0 ? count(LATEX, lower) : 0;
  const mathMarkers = operators + equations + mathHard + mathSoft + latex + (wordProblem ? 1 : 0);

  const fences = occurs(view, CHAR.backtick) >= 3 ? occurrences(lower, "```") : 0;
  const codeOperators = mayHaveCodeOperator(view) ? count(CODE_OPERATOR, lower) : 0;
  const codeKeywords = (words[MARKER.codeKeyword] ?? 0) + codeOperators;
  const codeHard = words[MARKER.codeHard] ?? 0;
  const codeSoft = words[MARKER.codeSoft] ?? 0;
  let brackets = 0;
  for (let b = 0; b < BRACKETS.length; b++) brackets += view.latin1[BRACKETS[b] ?? 0] ?? 0;
  const bracketDensity = lower.length > 0 ? brackets / lower.length : 0;
  const codeMarkers = (fences >= 2 ? 1 : 0) + codeKeywords + codeHard + codeSoft;

  const reasoningMarkers = words[MARKER.reasoning] ?? 0;
  const questions = occurs(view, CHAR.question) + occurrences(lower, "？");
  const listItemCount = listItems(view);
  const constraintWords = words[MARKER.constraint] ?? 0;
  const constraints = (listItemCount >= 2 ? listItemCount : 0) + constraintWords;
  const mixedLanguage = stats.cjk >= 4 && stats.latinLetters >= 12 && Math.min(stats.cjk, stats.latinLetters / 4) / approxTokens >= 0.1;

  const strengths: Record<ComplexitySignal, number> = {
    length: approxTokens <= 30 ? 0 : clamp01(Math.log(approxTokens / 30) / Math.log(4000 / 30)),
    conversation: clamp01(Math.max(0, userTurns - 1) / 6 + 0.4 * crossTurnRefs),
    math: clamp01(
      0.3 * Math.min(operators, 3) +
        0.25 * Math.min(equations, 3) +
        0.55 * mathHard +
        0.15 * mathSoft +
        0.5 * Math.min(latex, 2) +
        (wordProblem ? 0.6 + 0.05 * Math.min(numbers - 3, 6) + 0.1 * Math.min(multiStep, 4) : 0),
    ),
    code: clamp01(
      (fences >= 2 ? 0.5 : 0) +
        0.1 * Math.min(codeKeywords, 5) +
        0.6 * codeHard +
        0.2 * Math.min(codeSoft, 2) +
        (bracketDensity > 0.04 && lower.length > 40 ? 0.3 : 0),
    ),
    reasoning: clamp01(0.35 * reasoningMarkers),
    structure: clamp01(0.25 * Math.max(0, questions - 1) + (listItemCount >= 2 ? 0.15 * listItemCount : 0) + 0.15 * constraintWords),
    language: mixedLanguage ? 1 : 0,
  };

  const score = Math.round(noisyOr(strengths) * 1000) / 1000;

  return {
    score,
    level: complexityLevel(score),
    features: {
      approxTokens,
      userTurns,
      crossTurnRefs,
      mathMarkers,
      codeMarkers,
      reasoningMarkers,
      questions,
      constraints,
      mixedLanguage,
      strengths,
    },
  };
}
