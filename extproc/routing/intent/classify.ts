/**
 * `classifyIntent`: the intent of a chat request, for routing. A valid client hint wins, then the
 * high-precision pattern layer, then the committed model (`weights.json`); a low-confidence
 * model guess is `unknown`. Pure and synchronous. See `pipeline.ts` for the order of the layers.
 */
import { predictIntent } from "./model.ts";
import { type IntentClassifier, createClassifier } from "./pipeline.ts";

export { INTENTS, type Intent, isIntent } from "./intents.ts";
export { MODEL_THRESHOLD, type IntentResult, type IntentSource } from "./pipeline.ts";

/** `classifyIntent(messages, hint?)` → `{ intent, confidence, source }`. */
export const classifyIntent: IntentClassifier = createClassifier(predictIntent);
