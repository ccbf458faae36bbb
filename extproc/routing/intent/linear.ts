/**
 * The intent model: multinomial logistic regression over hashed character n-grams
 * (`features.ts`). Weights travel as int8 (one global scale) in base64, so the committed
 * `weights.json` stays small; inference is a sparse sum of weight rows plus a softmax.
 */
import { BUCKET_BITS, MAX_FEATURES, hashNgrams } from "./features.ts";
import { type Intent, isIntent } from "./intents.ts";
import { fail, ok, type Result } from "../../result.ts";

export const WEIGHTS_FORMAT = "gearbox-intent-linear/1";

/** The JSON shape of `weights.json`. */
export interface WeightsFile {
  format: string;
  bucketBits: number;
  labels: string[];
  /** Real weight = int8 value × scale. */
  scale: number;
  bias: number[];
  /** Base64 of int8 weights, row-major: bucket × labels.length + label. */
  weights: string;
  trainedOn?: string;
}

export interface Prediction {
  intent: Intent;
  confidence: number;
}

export class IntentModel {
  readonly labels: readonly Intent[];
  private readonly k: number;
  private readonly q: Int8Array;
  private readonly scale: number;
  private readonly b: Float64Array;
  private readonly buckets = new Int32Array(MAX_FEATURES);
  private sums = new Int32Array(12);
  private readonly scores: Float64Array;

  /** `q` is int8 weights, buckets × labels row-major (real weight = q × scale); one bias per label. */
  constructor(labels: readonly Intent[], q: Int8Array, scale: number, bias: ArrayLike<number>) {
    this.labels = labels;
    this.k = labels.length;
    this.q = q;
    this.scale = scale;
    this.b = Float64Array.from(bias);
    this.scores = new Float64Array(this.k);
    if (this.k > this.sums.length) this.sums = new Int32Array(this.k);
  }

  /** Integer sums of the weight rows of `n` buckets; the common 12-label case is unrolled. */
  private accumulate(n: number): void {
    const q = this.q;
    const buckets = this.buckets;
    const sums = this.sums;
    if (this.k === 12) {
      let a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0, a11 = 0;
      for (let i = 0; i < n; i++) {
        const r = (buckets[i] ?? 0) * 12;
        a0 += q[r] ?? 0; a1 += q[r + 1] ?? 0; a2 += q[r + 2] ?? 0; a3 += q[r + 3] ?? 0;
        a4 += q[r + 4] ?? 0; a5 += q[r + 5] ?? 0; a6 += q[r + 6] ?? 0; a7 += q[r + 7] ?? 0;
        a8 += q[r + 8] ?? 0; a9 += q[r + 9] ?? 0; a10 += q[r + 10] ?? 0; a11 += q[r + 11] ?? 0;
      }
      sums[0] = a0; sums[1] = a1; sums[2] = a2; sums[3] = a3; sums[4] = a4; sums[5] = a5;
      sums[6] = a6; sums[7] = a7; sums[8] = a8; sums[9] = a9; sums[10] = a10; sums[11] = a11;
      return;
    }
    const k = this.k;
    sums.fill(0);
    for (let i = 0; i < n; i++) {
      const r = (buckets[i] ?? 0) * k;
      for (let c = 0; c < k; c++) sums[c] = (sums[c] ?? 0) + (q[r + c] ?? 0);
    }
  }

  /** Softmax probabilities over `labels`, written into a buffer the next call reuses. */
  probabilities(text: string): Float64Array {
    const k = this.k;
    const s = this.scores;
    const n = hashNgrams(text, this.buckets);
    this.accumulate(n);
    const norm = n > 0 ? this.scale / Math.sqrt(n) : 0;
    let max = -Infinity;
    for (let c = 0; c < k; c++) {
      const v = (this.sums[c] ?? 0) * norm + (this.b[c] ?? 0);
      s[c] = v;
      if (v > max) max = v;
    }
    let sum = 0;
    for (let c = 0; c < k; c++) {
      const e = Math.exp((s[c] ?? 0) - max);
      s[c] = e;
      sum += e;
    }
    for (let c = 0; c < k; c++) s[c] = (s[c] ?? 0) / sum;
    return s;
  }

  predict(text: string): Prediction {
    const p = this.probabilities(text);
    let best = 0;
    for (let c = 1; c < this.k; c++) if ((p[c] ?? 0) > (p[best] ?? 0)) best = c;
    return { intent: this.labels[best] ?? "unknown", confidence: p[best] ?? 0 };
  }
}

/** Checks a parsed `weights.json` and builds the model it describes. */
export function loadModel(file: WeightsFile): Result<IntentModel, string> {
  const errors: string[] = [];
  if (file.format !== WEIGHTS_FORMAT) errors.push(`format: expected '${WEIGHTS_FORMAT}', got '${file.format}'`);
  if (file.bucketBits !== BUCKET_BITS) errors.push(`bucketBits: expected ${BUCKET_BITS}, got ${file.bucketBits}`);
  const labels = file.labels.filter(isIntent);
  if (labels.length !== file.labels.length || labels.length === 0) errors.push("labels: every label must be a known intent");
  if (file.bias.length !== file.labels.length) errors.push("bias: one value per label");
  if (!(file.scale > 0)) errors.push("scale: must be positive");
  const raw = Buffer.from(file.weights, "base64");
  if (raw.length !== (1 << BUCKET_BITS) * file.labels.length) errors.push(`weights: expected ${(1 << BUCKET_BITS) * file.labels.length} bytes, got ${raw.length}`);
  if (errors.length > 0) return fail(...errors);
  const q = new Int8Array(raw.length);
  q.set(new Int8Array(raw.buffer, raw.byteOffset, raw.length));
  return ok(new IntentModel(labels, q, file.scale, file.bias));
}

/** Quantises float weights to int8 with one global scale (max |w| ↦ 127). */
export function encodeWeights(labels: readonly Intent[], w: Float32Array, bias: ArrayLike<number>, trainedOn: string): WeightsFile {
  let max = 0;
  for (const v of w) max = Math.max(max, Math.abs(v));
  const scale = max > 0 ? max / 127 : 1;
  const q = Buffer.alloc(w.length);
  for (let i = 0; i < w.length; i++) q.writeInt8(Math.max(-127, Math.min(127, Math.round((w[i] ?? 0) / scale))), i);
  return {
    format: WEIGHTS_FORMAT,
    bucketBits: BUCKET_BITS,
    labels: [...labels],
    scale: Number(scale.toPrecision(8)),
    bias: Array.from(bias, (v) => Number(v.toFixed(5))),
    weights: q.toString("base64"),
    trainedOn,
  };
}

