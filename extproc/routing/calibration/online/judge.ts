/**
 * A judge grades an edge answer against the cloud's answer to the same request: 1 = as good,
 * 0 = worse, 2 = better (only the cloud judge can tell). Online calibration counts `1 − grade` as
 * the quality the edge lost (a better answer is a gain). Implementations:
 * normalized exact match (closed-form answers), embedding similarity, and the cloud model as a
 * judge with a fixed rubric. A judge that fails returns `undefined`: the sample is dropped.
 */
export interface JudgeInput {
  prompt: string;
  edgeAnswer: string;
  cloudAnswer: string;
}

export interface Judge {
  readonly name: string;
  grade(input: JudgeInput): Promise<number | undefined>;
}

/** Lower case, no punctuation or markup, single spaces; a leading "answer:" and trailing period dropped. */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .normalize("NFKC")
    .replace(/^\s*(the\s+)?(final\s+)?answer\s*(is)?\s*[:：]?\s*/u, "")
    .replace(/[\p{P}\p{S}]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

export const exactMatchJudge: Judge = {
  name: "exact",
  grade: ({ edgeAnswer, cloudAnswer }) => Promise.resolve(normalizeAnswer(edgeAnswer) === normalizeAnswer(cloudAnswer) ? 1 : 0),
};

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] ?? 0) * (b[i] ?? 0);
    na += (a[i] ?? 0) ** 2;
    nb += (b[i] ?? 0) ** 2;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** As good when the two answers' embeddings are at least `minSimilarity` apart in cosine (e.g. the semantic cache's embedder). */
export function embeddingJudge(embed: (texts: string[]) => Promise<number[][]>, minSimilarity = 0.85): Judge {
  return {
    name: "embedding",
    async grade({ edgeAnswer, cloudAnswer }) {
      try {
        const [a, b] = await embed([edgeAnswer, cloudAnswer]);
        if (a === undefined || b === undefined) return undefined;
        return cosine(a, b) >= minSimilarity ? 1 : 0;
      } catch {
        return undefined;
      }
    },
  };
}

/** The fixed rubric the cloud judge is given; its verdict is the first line: BETTER, SAME or WORSE. */
export const JUDGE_RUBRIC = `You compare two answers to the same request. Answer B is the reference.
Judge only correctness and completeness for what the request asks, not style or length.
Reply with one word on the first line: SAME if answer A is as correct and complete as B,
BETTER if A is more correct, WORSE if A is less correct or misses something B gets right.`;

export function judgePrompt({ prompt, edgeAnswer, cloudAnswer }: JudgeInput): string {
  return `${JUDGE_RUBRIC}\n\n<request>\n${prompt}\n</request>\n<answer_a>\n${edgeAnswer}\n</answer_a>\n<answer_b>\n${cloudAnswer}\n</answer_b>`;
}

/** The cloud model as judge: `complete` sends one user message (temperature 0) and returns the text. */
export function cloudJudge(complete: (prompt: string) => Promise<string>): Judge {
  return {
    name: "cloud",
    async grade(input) {
      let reply: string;
      try {
        reply = await complete(judgePrompt(input));
      } catch {
        return undefined;
      }
      const verdict = /^\s*(BETTER|SAME|WORSE)\b/i.exec(reply)?.[1]?.toUpperCase();
      return verdict === undefined ? undefined : verdict === "WORSE" ? 0 : verdict === "BETTER" ? 2 : 1;
    },
  };
}
