/**
 * The intent model: multinomial logistic regression over hashed word and character features
 * (`features.ts`). Weights travel as int8 (one global scale) in base64, so the committed
 * `weights.json` stays small; inference is a sparse sum of weight rows (packed two labels to a
 * 32-bit word) plus a softmax.
 */
import { BUCKET_BITS, MAX_FEATURES, textFeatures } from "./features.ts";
import { type Intent, isIntent } from "./intents.ts";
import { fail, ok, type Result } from "../../../common/result.ts";

/** Version 2: word and character unit features (version 1 was character 1–4-grams). */
export const WEIGHTS_FORMAT = "gearbox-intent-linear/2";

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

/**
 * Features summed between two flushes of the 16-bit lanes: each lane adds at most 255 per
 * feature, and 256 × 255 < 2^16.
 */
const LANE_BLOCK = 256;

/**
 * Packs int8 weights, buckets × labels, two labels to a 32-bit word: label 2j in the low 16 bits
 * and 2j + 1 in the high 16 bits of word j of the bucket's row, each as `q + 128` (0–255), so one
 * load and one add serve two labels.
 */
function packPairs(q: Int8Array, k: number): Int32Array {
  const lanes = Math.ceil(k / 2);
  const rows = q.length / k;
  const packed = new Int32Array(rows * lanes);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < k; c++) {
      const value = (q[r * k + c] ?? 0) + 128;
      const word = r * lanes + (c >> 1);
      packed[word] = (packed[word] ?? 0) | (c % 2 === 0 ? value : value << 16);
    }
  }
  return packed;
}

export class IntentModel {
  readonly labels: readonly Intent[];
  private readonly k: number;
  private readonly lanes: number;
  private readonly packed: Int32Array;
  private readonly scale: number;
  private readonly b: Float64Array;
  private readonly buckets = new Int32Array(MAX_FEATURES);
  private readonly laneSums: Int32Array;
  private readonly sums: Int32Array;
  private readonly scores: Float64Array;

  /** `q` is int8 weights, buckets × labels row-major (real weight = q × scale); one bias per label. */
  constructor(labels: readonly Intent[], q: Int8Array, scale: number, bias: ArrayLike<number>) {
    this.labels = labels;
    this.k = labels.length;
    this.lanes = Math.ceil(this.k / 2);
    this.packed = packPairs(q, this.k);
    this.scale = scale;
    this.b = Float64Array.from(bias);
    this.laneSums = new Int32Array(this.lanes);
    this.sums = new Int32Array(this.k);
    this.scores = new Float64Array(this.k);
  }

  /** Integer sums of the weight rows of `n` buckets, a block of features at a time. */
  private accumulate(n: number): void {
    const sums = this.sums;
    const laneSums = this.laneSums;
    sums.fill(0);
    for (let from = 0; from < n; from += LANE_BLOCK) {
      const to = Math.min(n, from + LANE_BLOCK);
      if (this.lanes === 6) this.addRows6(from, to);
      else this.addRows(from, to);
      for (let j = 0; j < this.lanes; j++) {
        const lane = laneSums[j] ?? 0;
        sums[2 * j] = (sums[2 * j] ?? 0) + (lane & 0xffff);
        if (2 * j + 1 < this.k) sums[2 * j + 1] = (sums[2 * j + 1] ?? 0) + (lane >>> 16);
      }
    }
    // Every lane held `q + 128`.
    for (let c = 0; c < this.k; c++) sums[c] = (sums[c] ?? 0) - 128 * n;
  }

  /** Lane sums of the rows of buckets[from, to); any number of labels. */
  private addRows(from: number, to: number): void {
    const { packed, buckets, laneSums, lanes } = this;
    laneSums.fill(0);
    for (let i = from; i < to; i++) {
      const r = (buckets[i] ?? 0) * lanes;
      for (let j = 0; j < lanes; j++) laneSums[j] = (laneSums[j] ?? 0) + (packed[r + j] ?? 0);
    }
  }

  /** `addRows` unrolled for the common 12 labels (6 lanes). */
  private addRows6(from: number, to: number): void {
    const { packed, buckets, laneSums } = this;
    // `| 0` keeps the sums in 32-bit integers; a sum past 2^31 wraps, and `>>> 16` reads it back.
    let l0 = 0,
      l1 = 0,
      l2 = 0,
      l3 = 0,
      l4 = 0,
      l5 = 0;
    for (let i = from; i < to; i++) {
      const r = (buckets[i] ?? 0) * 6;
      l0 = (l0 + (packed[r] ?? 0)) | 0;
      l1 = (l1 + (packed[r + 1] ?? 0)) | 0;
      l2 = (l2 + (packed[r + 2] ?? 0)) | 0;
      l3 = (l3 + (packed[r + 3] ?? 0)) | 0;
      l4 = (l4 + (packed[r + 4] ?? 0)) | 0;
      l5 = (l5 + (packed[r + 5] ?? 0)) | 0;
    }
    laneSums[0] = l0;
    laneSums[1] = l1;
    laneSums[2] = l2;
    laneSums[3] = l3;
    laneSums[4] = l4;
    laneSums[5] = l5;
  }

  /** Softmax probabilities over `labels`, written into a buffer the next call reuses. */
  probabilities(text: string): Float64Array {
    const k = this.k;
    const s = this.scores;
    const n = textFeatures(text, this.buckets);
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
  if (raw.length !== (1 << BUCKET_BITS) * file.labels.length)
    errors.push(`weights: expected ${(1 << BUCKET_BITS) * file.labels.length} bytes, got ${raw.length}`);
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
