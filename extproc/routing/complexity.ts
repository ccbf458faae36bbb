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
 * | length       | 0.50   | approximate tokens of every message (Latin chars/4, 1 per CJK char), log-scaled 30 → 0, 4000 → 1 |
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
 */
import type { Message } from "../canonical/types.ts";

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

// Patterns run over lower-cased text. Each global pattern is counted with `count()`.
const CROSS_REF =
  /\b(as i (said|mentioned)|(said|mentioned|discussed) (above|before|earlier)|the previous|previous (answer|message|one|reply)|your (last|previous) (answer|reply|message)|you (said|mentioned)|earlier you|above code|the above)\b|上面|上述|刚才|之前(说|提|的)|前面(说|提|的)|上一(个|条|轮|次)|你刚/g;
const MATH_OPERATOR = /\d\s*[-+*/×÷^%]\s*\(?\s*\d|\d\s*[=<>≤≥]\s*\d/g;
const MATH_EQUATION = /\b[a-z]\s*(\^\s*\d|²|³)|[a-z0-9)]\s*=\s*[-\d(a-z]|\b(solve|equation|equations|x\s*=)/g;
const MATH_HARD =
  /\b(prove|proof|derivative|derive|integral|integrate|theorem|lemma|limit of|probability|expected value|eigen\w*|matrix|polynomial|logarithm|factorial|permutations?|combinations?|modulo|prime numbers?|irrational|differential|gradient)\b|证明|求导|导数|积分|微分|方程|概率|矩阵|多项式|极限|定理|排列|组合|质数|素数/g;
const MATH_SOFT = /\b(calculate|compute|sum of|average|percent|percentage|ratio|area|volume|speed|km\/h|mph)\b|计算|平均|百分之|比例|面积|体积|速度/g;
const LATEX = /\\(frac|sum|int|sqrt|prod|lim|alpha|beta|theta|pi|cdot|times|le|ge|infty|partial|begin)\b|\$[^$\n]{1,200}\$/g;
const QUANTITY_QUESTION = /\b(how (many|much|far|long|fast|old)|what time|what is the (total|probability|value))\b|多少|几(个|天|小时|点|岁|公里|次)|多久|多远/;
const NUMBER = /\d+(\.\d+)?/g;
const MULTI_STEP = /\b(then|after that|remaining|left over|again|each|twice|half|times as (many|much)|in total|altogether)\b|然后|之后|又|剩下|剩余|每人|每个|一共|总共|再/g;
const CODE_FENCE = /```/g;
const CODE_KEYWORD =
  /\b(function|def|class|return|import|const|let|var|public static|void|async|await|lambda|struct|impl|fn|#include|select .+ from|for \(|while \(|elif|printf|println|console\.log|null pointer)\b|=>|::|->|\);/g;
const CODE_HARD =
  /\b(time complexity|space complexity|big[- ]o|o\(n( log n|\^2|²)?\)|refactor\w*|bugs?|debug\w*|stack ?trace|exception|segfault|segmentation fault|race condition|deadlock|memory leak|compile[rs]?|regex|algorithm|recursion|recursive|concurren\w+|implement\w*|write (a|an|the) (function|program|script|class|method|query)|unit tests?|sql|typescript|javascript|python|java|rust|golang|c\+\+)\b|时间复杂度|空间复杂度|重构|调试|报错|异常|死锁|内存泄漏|算法|递归|并发|写(一个|个)?(函数|程序|脚本|类|方法)|单元测试/g;
const CODE_SOFT = /\b(code|program|function|script|api|variable|loop|array)\b|代码|程序|函数|变量|数组/g;
const REASONING =
  /\b(why|explain\w*|compare\w*|comparison|step[- ]by[- ]step|reason\w*|analy[sz]\w*|pros and cons|trade-?offs?|difference between|evaluate|justify|infer|deduce|implications?|what would happen|cause|consequences?)\b|\bif\b[^.?!\n]{1,120}\b(then|would|will)\b|为什么|为何|比较|推理|分析|解释|原因|区别|优缺点|权衡|一步一步|逐步|如果[^。？！\n]{1,60}(那么|就|会)|推断|论证/g;
const CONSTRAINT_WORD =
  /\b(must|must not|at least|at most|no more than|no less than|without using|exactly \d+|make sure|ensure|constraints?|requirements?)\b|不超过|不少于|至少|至多|必须|不能|要求|限制|确保/g;
const LIST_ITEM = /^\s*(\d+[.)、]|[-*•]|[一二三四五六七八九十]+、)\s*\S/gm;
const QUESTION_MARK = /[?？]/g;

function count(pattern: RegExp, text: string): number {
  pattern.lastIndex = 0;
  let n = 0;
  while (pattern.exec(text) !== null) n++;
  return n;
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

function isCjk(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x3040 && code <= 0x30ff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0xf900 && code <= 0xfaff)
  );
}

interface TextStats {
  tokens: number;
  cjk: number;
  latinLetters: number;
}

/** One pass: approximate tokens (Latin non-space chars / 4, one per CJK char) and script counts. */
function textStats(text: string, into: TextStats): void {
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 32) continue;
    if (c >= 0x3040 && isCjk(c)) {
      into.cjk++;
    } else {
      other++;
      if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) into.latinLetters++;
    }
  }
  into.tokens += other / 4;
}

function messageText(message: Message): string {
  const content = message.content;
  if (content === null) return "";
  if (typeof content === "string") return content;
  let text = "";
  for (const part of content) if (part.type === "text") text += (text === "" ? "" : "\n") + part.text;
  return text;
}

/** How much of a long input the marker patterns read: its head and its tail. */
export const MARKER_HEAD = 1500;
export const MARKER_TAIL = 500;

export function estimateComplexity(messages: readonly Message[]): ComplexityEstimate {
  const stats: TextStats = { tokens: 0, cjk: 0, latinLetters: 0 };
  let userTurns = 0;
  let marked = "";
  for (const message of messages) {
    const text = messageText(message);
    textStats(text, stats);
    if (message.role === "user") userTurns++;
    if (message.role === "user" || message.role === "tool") marked += (marked === "" ? "" : "\n") + text;
  }
  const approxTokens = Math.round(stats.tokens + stats.cjk);
  // Markers are read on the head and tail of long inputs (length counts everything): the
  // decision stays cheap on pasted documents, and marker strengths saturate long before.
  if (marked.length > MARKER_HEAD + MARKER_TAIL) marked = `${marked.slice(0, MARKER_HEAD)}\n${marked.slice(-MARKER_TAIL)}`;
  const lower = marked.toLowerCase();

  const crossTurnRefs = count(CROSS_REF, lower);
  const numbers = count(NUMBER, lower);
  const quantityQuestion = QUANTITY_QUESTION.test(lower);
  const wordProblem = numbers >= 3 && quantityQuestion;
  const multiStep = wordProblem ? count(MULTI_STEP, lower) : 0;
  const operators = count(MATH_OPERATOR, lower);
  const equations = count(MATH_EQUATION, lower);
  const mathHard = count(MATH_HARD, lower);
  const mathSoft = count(MATH_SOFT, lower);
  const latex = count(LATEX, lower);
  const mathMarkers = operators + equations + mathHard + mathSoft + latex + (wordProblem ? 1 : 0);

  const fences = count(CODE_FENCE, lower);
  const codeKeywords = count(CODE_KEYWORD, lower);
  const codeHard = count(CODE_HARD, lower);
  const codeSoft = count(CODE_SOFT, lower);
  let brackets = 0;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    // ( ) ; [ ] { }
    if (c === 40 || c === 41 || c === 59 || c === 91 || c === 93 || c === 123 || c === 125) brackets++;
  }
  const bracketDensity = lower.length > 0 ? brackets / lower.length : 0;
  const codeMarkers = (fences >= 2 ? 1 : 0) + codeKeywords + codeHard + codeSoft;

  const reasoningMarkers = count(REASONING, lower);
  const questions = count(QUESTION_MARK, lower);
  const listItems = count(LIST_ITEM, marked);
  const constraintWords = count(CONSTRAINT_WORD, lower);
  const constraints = (listItems >= 2 ? listItems : 0) + constraintWords;
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
    structure: clamp01(0.25 * Math.max(0, questions - 1) + (listItems >= 2 ? 0.15 * listItems : 0) + 0.15 * constraintWords),
    language: mixedLanguage ? 1 : 0,
  };

  let keep = 1;
  for (const signal of Object.keys(strengths) as ComplexitySignal[]) keep *= 1 - COMPLEXITY_WEIGHTS[signal] * strengths[signal];
  const score = Math.round((1 - keep) * 1000) / 1000;

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
