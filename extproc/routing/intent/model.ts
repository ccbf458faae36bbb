/**
 * The committed intent model, loaded once when this module is first imported. Produced by
 * `node --import tsx bench/intent/train.ts`; `bench/intent/README.md` says what data it saw.
 */
import weights from "./weights.json" with { type: "json" };
import { type IntentModel, type Prediction, loadModel } from "./linear.ts";

function load(): IntentModel {
  const model = loadModel(weights);
  if (!model.ok) throw new Error(`extproc/routing/intent/weights.json is invalid: ${model.errors.join("; ")}`);
  return model.value;
}

export const intentModel: IntentModel = load();

/** The model's best label for `text` and its softmax probability. */
export function predictIntent(text: string): Prediction {
  return intentModel.predict(text);
}
