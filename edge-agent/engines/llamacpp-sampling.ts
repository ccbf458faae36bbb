/**
 * Seeded token sampling over the model's own next-token distribution. llama.cpp evaluates with
 * its greedy sampler, which leaves the full softmax untouched; the engine reports log-probabilities
 * from that raw distribution (independent of temperature, as llama-server and OpenAI do) and, when
 * `temperature > 0`, draws the token here: temperature first, then nucleus (top-p) truncation, then
 * one draw from a seeded PRNG, so one seed gives one answer.
 */

/** mulberry32: a small, fast, seedable 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Draws a token from `probabilities` (token → probability, sorted from most to least likely, as
 * node-llama-cpp returns them) at `temperature` (> 0) with nucleus `topP` (1 = off).
 */
export function sampleToken<T extends number>(probabilities: ReadonlyMap<T, number>, temperature: number, topP: number, random: () => number): T {
  const n = probabilities.size;
  const tokens: T[] = new Array<T>(n);
  const weights = new Float64Array(n);
  let maxLog = -Infinity;
  let i = 0;
  for (const [token, p] of probabilities) {
    tokens[i] = token;
    const logp = p > 0 ? Math.log(p) : -Infinity;
    weights[i] = logp;
    if (logp > maxLog) maxLog = logp;
    i++;
  }
  if (maxLog === -Infinity) throw new Error("sampleToken: empty distribution");

  // p^(1/T), scaled by the largest for range; sorting is unchanged by a temperature.
  let total = 0;
  for (let k = 0; k < n; k++) {
    const w = Math.exp(((weights[k] ?? -Infinity) - maxLog) / temperature);
    weights[k] = w;
    total += w;
  }

  let keep = n;
  if (topP < 1) {
    let cumulative = 0;
    for (let k = 0; k < n; k++) {
      cumulative += weights[k] ?? 0;
      if (cumulative >= topP * total) {
        keep = k + 1;
        total = cumulative;
        break;
      }
    }
  }

  let target = random() * total;
  for (let k = 0; k < keep; k++) {
    target -= weights[k] ?? 0;
    if (target < 0) return tokens[k] as T;
  }
  // Rounding left a sliver: the last kept token with any weight.
  for (let k = keep - 1; k >= 0; k--) if ((weights[k] ?? 0) > 0) return tokens[k] as T;
  return tokens[0] as T;
}
