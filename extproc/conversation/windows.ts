/**
 * Context windows in tokens, by model name prefix (the providers' published figures), for the
 * history budget. `conversations.context_windows` overrides; an edge model not listed gets
 * `conversations.edge_context_tokens`, a cloud model not listed 128 k.
 */
const WINDOWS: readonly [RegExp, number][] = [
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-5/, 400_000],
  [/^(o1|o3|o4)/, 200_000],
  [/^gpt-4o/, 128_000],
  [/^gpt-4-turbo/, 128_000],
  [/^gpt-4(?!o|\.)/, 8_192],
  [/^gpt-3\.5/, 16_385],
  [/^claude/, 200_000],
  [/^gemini/, 1_048_576],
  [/^deepseek/, 64_000],
  [/^(qwen-long)/, 1_000_000],
  [/^qwen/, 131_072],
  [/^(moonshot|kimi)/, 128_000],
  [/^glm/, 128_000],
  [/^(mistral|ministral|codestral)/, 128_000],
  [/^grok/, 131_072],
  [/^llama-?3/, 131_072],
];

export const CLOUD_DEFAULT_WINDOW = 128_000;

export function contextWindow(model: string, target: "edge" | "cloud", overrides: Readonly<Record<string, number>>, edgeDefault: number): number {
  const bare = model.replace(/^[^/]+\//, "");
  const given = overrides[model] ?? overrides[bare];
  if (given !== undefined) return given;
  if (target === "edge") return edgeDefault;
  return WINDOWS.find(([pattern]) => pattern.test(bare))?.[1] ?? CLOUD_DEFAULT_WINDOW;
}
