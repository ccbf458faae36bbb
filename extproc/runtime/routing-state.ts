/**
 * The gateway's live routing state, which must outlive a configuration: conversation
 * stickiness, the cloud-latency window, this month's cloud spend and the thresholds online
 * calibration holds (`routing/calibration/online/online.ts`). One object per gateway,
 * owned by its `Runtime` (`runtime.ts`), so a policy pushed by the control plane — a new
 * snapshot — changes how requests are decided, not what the gateway has seen.
 */
import { OnlineCalibration } from "../routing/calibration/online/online.ts";
import { CloudSpend, LatencyWindow, StickyTargets } from "../routing/signals.ts";

export interface RoutingState {
  /** Last target per conversation (`x-gearbox-conversation-id`). */
  readonly sticky: StickyTargets;
  /** Recent cloud latencies, for the dynamic layer's latency steps. */
  readonly cloudLatency: LatencyWindow;
  /** This month's cloud spend, for the dynamic layer's budget steps. */
  readonly cloudSpend: CloudSpend;
  /** Per tenant and intent, the threshold `route.target_quality` is kept with, from judged shadow samples. */
  readonly calibration: OnlineCalibration;
}

/** A fresh state; `parts` replaces any of its members (a test's own spend, say). */
export function createRoutingState(parts: Partial<RoutingState> = {}): RoutingState {
  return { sticky: new StickyTargets(), cloudLatency: new LatencyWindow(), cloudSpend: new CloudSpend(), calibration: new OnlineCalibration(), ...parts };
}
