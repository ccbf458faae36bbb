/**
 * Answer confidence from token log-probabilities: the mean log-probability of the generated
 * tokens, mapped to 0–1 as its exponential (the geometric mean of the token probabilities). A
 * confident model scores near 1; a guessing one near 1/vocabulary. Tokens whose log-probability
 * the engine could not report (NaN) are left out; with none left there is no score.
 */

export interface Confidence {
  /** Mean natural-log probability per generated token (≤ 0). */
  meanLogprob: number;
  /** exp(meanLogprob), in (0, 1]. */
  score: number;
  /** Tokens that contributed. */
  tokens: number;
}

export class ConfidenceMeter {
  private sum = 0;
  private count = 0;

  add(logprob: number): void {
    if (!Number.isFinite(logprob)) return;
    this.sum += Math.min(0, logprob);
    this.count++;
  }

  result(): Confidence | undefined {
    if (this.count === 0) return undefined;
    const meanLogprob = this.sum / this.count;
    return { meanLogprob, score: Math.exp(meanLogprob), tokens: this.count };
  }
}

/** The response header carrying the score, for Gearbox's upgrade-to-cloud check. */
export const CONFIDENCE_HEADER = "x-gearbox-confidence";

/** The body field (non-stream answer, last stream chunk) carrying the same figures. */
export function confidenceField(c: Confidence | undefined): { gearbox: { confidence: number | null; mean_logprob: number | null; scored_tokens: number } } {
  return { gearbox: { confidence: c ? round(c.score) : null, mean_logprob: c ? round(c.meanLogprob) : null, scored_tokens: c?.tokens ?? 0 } };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
