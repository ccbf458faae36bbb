/**
 * What one edge agent should hold, and the version of it. The version is a hash of the
 * canonical content (models sorted by id, defaults dropped), not a counter: the same models give
 * the same version in every control-plane process, so an agent that reconnects to a restarted
 * control plane reports the version it already holds and is sent nothing.
 */
import { createHash } from "node:crypto";
import type { ModelSpecMessage } from "../../common/registry/wire.ts";

/** One model an agent should serve (`gearbox.v1.ModelSpec`; 0 / "" / absent = the engine's default). */
export interface ModelSpec {
  id: string;
  /** `llamacpp`, `ollama` or `onnx`. */
  engine: string;
  /** GGUF path or `hf:` URI, Ollama model name, ONNX file. */
  source: string;
  threads?: number;
  context_length?: number;
  /** `onnx` only: the tokenizer JSON. */
  tokenizer?: string;
}

/** The models in canonical form: sorted by id, only the fields that are set. */
export function canonicalModels(models: readonly ModelSpec[]): ModelSpecMessage[] {
  return [...models]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((m) => ({
      id: m.id,
      engine: m.engine,
      source: m.source,
      ...(m.threads ? { threads: m.threads } : {}),
      ...(m.context_length ? { context_length: m.context_length } : {}),
      ...(m.tokenizer ? { tokenizer: m.tokenizer } : {}),
    }));
}

/** The content version of an assignment: 16 hex digits of SHA-256 over its canonical JSON. */
export function assignmentVersion(models: readonly ModelSpec[]): string {
  return createHash("sha256")
    .update(JSON.stringify(canonicalModels(models)))
    .digest("hex")
    .slice(0, 16);
}
