/**
 * The gateway's live routing state, which must outlive a configuration: conversation
 * stickiness, the cloud-latency window and this month's cloud spend. One object per gateway
 * (built once where its `ProcessorDeps` are), so a policy pushed by the control plane — a new
 * config object — changes how requests are decided, not what the gateway has seen.
 */
import { CloudSpend, LatencyWindow, StickyTargets } from "../routing/signals.ts";

export interface RuntimeState {
  /** Last target per conversation (`x-gearbox-conversation-id`). */
  readonly sticky: StickyTargets;
  /** Recent cloud latencies, for the dynamic layer's latency steps. */
  readonly cloudLatency: LatencyWindow;
  /** This month's cloud spend, for the dynamic layer's budget steps. */
  readonly cloudSpend: CloudSpend;
}

/** A fresh state; `parts` replaces any of its members (a test's own spend, say). */
export function createRuntimeState(parts: Partial<RuntimeState> = {}): RuntimeState {
  return { sticky: new StickyTargets(), cloudLatency: new LatencyWindow(), cloudSpend: new CloudSpend(), ...parts };
}

/** Deps given no state get one of their own, kept as long as that deps object lives. */
const OWN = new WeakMap<object, RuntimeState>();

/** The state of the gateway `deps` belongs to: `deps.runtime`, else one made once for that deps object. */
export function runtimeStateOf(deps: { runtime?: RuntimeState }): RuntimeState {
  if (deps.runtime) return deps.runtime;
  let own = OWN.get(deps);
  if (!own) OWN.set(deps, (own = createRuntimeState()));
  return own;
}
