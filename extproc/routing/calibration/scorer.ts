/**
 * A learned routing score: a logistic model over the complexity estimate's features and the
 * intent, predicting "the cloud answers this and the edge does not". Pure, no I/O; the weights
 * are plain data (`ScorerWeights`) so a trained model is a JSON file committed beside the script
 * that made it (`bench/routing/scorer-cv.ts` says whether one beats prompt length alone).
 */
import type { ComplexityEstimate } from "../complexity.ts";
import { INTENTS } from "../intent/intents.ts";

/** Names of `scorerFeatures`' entries, in order (weights files carry them as a check). */
export const SCORER_FEATURES: readonly string[] = [
  "log_tokens",
  "math",
  "code",
  "reasoning",
  "structure",
  "conversation",
  "log_math_markers",
  "log_code_markers",
  "log_reasoning_markers",
  "log_questions",
  "log_constraints",
  "extra_user_turns",
  ...INTENTS.map((i) => `intent_${i}`),
];

export function scorerFeatures(c: ComplexityEstimate, intent: string): number[] {
  const f = c.features;
  const s = f.strengths;
  const out = [
    Math.log1p(f.approxTokens),
    s.math,
    s.code,
    s.reasoning,
    s.structure,
    s.conversation,
    Math.log1p(f.mathMarkers),
    Math.log1p(f.codeMarkers),
    Math.log1p(f.reasoningMarkers),
    Math.log1p(f.questions),
    Math.log1p(f.constraints),
    Math.max(0, f.userTurns - 1),
  ];
  for (const known of INTENTS) out.push(known === intent ? 1 : 0);
  return out;
}

export interface ScorerWeights {
  features: readonly string[];
  mean: readonly number[];
  sd: readonly number[];
  weights: readonly number[];
  bias: number;
}

export interface Scorer {
  weights: ScorerWeights;
  /** 0–1: the predicted chance that routing this prompt to the edge loses the cloud's answer. */
  score(features: readonly number[]): number;
}

export function scorerFrom(w: ScorerWeights): Scorer {
  return {
    weights: w,
    score(x) {
      let z = w.bias;
      for (let j = 0; j < w.weights.length; j++) z += (w.weights[j] ?? 0) * (((x[j] ?? 0) - (w.mean[j] ?? 0)) / (w.sd[j] ?? 1));
      return 1 / (1 + Math.exp(-z));
    },
  };
}

/** Full-batch gradient descent with L2 on standardized features: deterministic, no seed. */
export function trainScorer(xs: readonly (readonly number[])[], ys: readonly number[], opts: { epochs?: number; l2?: number; lr?: number } = {}): Scorer {
  const epochs = opts.epochs ?? 300;
  const l2 = opts.l2 ?? 1e-3;
  const lr = opts.lr ?? 0.5;
  const n = xs.length;
  const d = SCORER_FEATURES.length;
  const mean = new Array<number>(d).fill(0);
  const sd = new Array<number>(d).fill(0);
  for (const x of xs) for (let j = 0; j < d; j++) mean[j] = (mean[j] ?? 0) + (x[j] ?? 0) / n;
  for (const x of xs) for (let j = 0; j < d; j++) sd[j] = (sd[j] ?? 0) + ((x[j] ?? 0) - (mean[j] ?? 0)) ** 2 / n;
  for (let j = 0; j < d; j++) sd[j] = Math.sqrt(sd[j] ?? 0) || 1;
  const z = xs.map((x) => x.map((v, j) => (v - (mean[j] ?? 0)) / (sd[j] ?? 1)));
  const w = new Array<number>(d).fill(0);
  let b = 0;
  for (let e = 0; e < epochs; e++) {
    const gw = new Array<number>(d).fill(0);
    let gb = 0;
    for (let i = 0; i < n; i++) {
      const row = z[i] ?? [];
      let s = b;
      for (let j = 0; j < d; j++) s += (w[j] ?? 0) * (row[j] ?? 0);
      const g = 1 / (1 + Math.exp(-s)) - (ys[i] ?? 0);
      gb += g / n;
      for (let j = 0; j < d; j++) gw[j] = (gw[j] ?? 0) + (g * (row[j] ?? 0)) / n;
    }
    b -= lr * gb;
    for (let j = 0; j < d; j++) w[j] = (w[j] ?? 0) - lr * ((gw[j] ?? 0) + l2 * (w[j] ?? 0));
  }
  return scorerFrom({ features: SCORER_FEATURES, mean, sd, weights: w, bias: b });
}
