/**
 * Online calibration, live: the gateway's one `OnlineCalibration` (in the `RoutingState`, so it
 * outlives policy pushes) holds a threshold per tenant and intent when the policy states
 * `route.target_quality` and `route.calibration.online.enable`.
 *
 *   decide    `threshold()` — the route's policy input reads the held threshold
 *             (`PolicyInput.calibratedThreshold`) and every auto-routed score is observed;
 *   kept      `kept()` — the cascade kept an edge answer on an auto route: the sampler may pick
 *             it (a fraction, a per-tenant budget per minute); then, in the background, the
 *             same request goes to the cloud, the judge grades the two answers and the grade
 *             is recorded. Nothing of it reaches the client or its latency: the shadow call
 *             starts after the client's answer is decided, its failures are counted and dropped
 *             (no sample, no spend charged to the tenant);
 *   audited   every move is a `calibration threshold moved` log line, a metric
 *             (`gearbox_calibration_*`), and the reason the next decisions carry in
 *             `x-gearbox-reason` (`heuristic:calibrated:q=…[lo,hi]<target;complexity=…<t`).
 *
 * A pushed policy with other calibration settings (target, base threshold, samples, band)
 * starts the estimators anew from the new base; the same settings keep what was learned.
 */
import type { Logger } from "../../../../common/telemetry/logger.ts";
import type { Message } from "../../../../common/canonical/types.ts";
import { QualityEstimator, ThresholdHolder, type ThresholdChange } from "./estimator.ts";
import { cloudJudge, embeddingJudge, exactMatchJudge, type Judge } from "./judge.ts";
import { ShadowSampler } from "./sampler.ts";

/** What of the `route:` section online calibration reads (the policy keys of `routing/policy/schema.ts`). */
export interface CalibrationRoute {
  target_quality?: number | undefined;
  heuristic: { complexity_threshold?: number | undefined; intent_thresholds?: Readonly<Record<string, number>> | undefined };
  calibration?:
    | {
        cloud_quality?: number | undefined;
        online: {
          enable: boolean;
          shadow_fraction: number;
          max_per_minute: number;
          judge: "exact" | "embedding" | "cloud";
          min_samples: number;
          hysteresis: number;
        };
      }
    | undefined;
}

/** The request's part in online calibration, decided with the route: which estimator, which score. */
export interface CalibrationTag {
  tenant: string;
  intent: string;
  score: number;
  threshold: number;
  /** `calibrated:initial=…` or the last move's reason. */
  source: string;
}

/** The background cloud call of a shadow sample: the same request's answer text (throws when it fails). */
export type ShadowCall = (messages: Message[]) => Promise<string>;

export interface OnlineCalibrationOptions {
  logger?: Logger;
  now?: () => number;
  random?: () => number;
  /** For the `embedding` judge (the semantic cache's embedder); absent → that judge drops every sample. */
  embed?: (texts: string[]) => Promise<number[][]>;
}

type Online = NonNullable<CalibrationRoute["calibration"]>["online"];

export class OnlineCalibration {
  private signature = "";
  private holder: ThresholdHolder | undefined;
  private sampler: ShadowSampler | undefined;
  private readonly pending = new Set<Promise<void>>();
  readonly stats = { shadowCalls: 0, shadowFailed: 0, judged: 0, judgeDropped: 0, overBudget: 0, movesUp: 0, movesDown: 0 };
  logger: Logger | undefined;
  /** For the `embedding` judge; absent → that judge drops every sample. */
  embed: ((texts: string[]) => Promise<number[][]>) | undefined;

  constructor(private readonly opts: OnlineCalibrationOptions = {}) {
    this.logger = opts.logger;
    this.embed = opts.embed;
  }

  /**
   * The held threshold for this request's tenant and intent, the score observed; undefined when
   * the policy has no target or online calibration is off (the configured thresholds apply).
   */
  threshold(route: CalibrationRoute, tenant: string, intent: string, score: number): CalibrationTag | undefined {
    const online = route.calibration?.online;
    if (route.target_quality === undefined || !online?.enable) return undefined;
    const estimator = this.holderFor(route, online).estimator(tenant, intent);
    estimator.observe(score);
    return { tenant, intent, score, threshold: estimator.threshold, source: estimator.lastReason };
  }

  /**
   * The cascade kept an edge answer on an auto route. Sampled → the shadow call and the judge run
   * in the background; returns whether it was sampled (for the request log).
   */
  kept(
    tag: CalibrationTag,
    route: CalibrationRoute,
    messages: Message[],
    edgeAnswer: string,
    shadow: ShadowCall,
    cloudComplete: (prompt: string) => Promise<string>,
  ): boolean {
    const online = route.calibration?.online;
    if (route.target_quality === undefined || !online?.enable) return false;
    const holder = this.holderFor(route, online);
    const sampler = this.sampler;
    if (!sampler) return false;
    const before = sampler.stats.overBudget;
    if (!sampler.maybeShadow(tag.tenant, (this.opts.now ?? Date.now)())) {
      this.stats.overBudget += sampler.stats.overBudget - before;
      return false;
    }
    const judge = this.judge(online.judge, cloudComplete);
    const prompt = promptText(messages);
    const run = (async () => {
      // Off the client's path: the shadow call starts after the answer is on its way.
      await new Promise((resolve) => setImmediate(resolve));
      this.stats.shadowCalls++;
      let cloudAnswer: string;
      try {
        cloudAnswer = await shadow(messages);
      } catch (err) {
        this.stats.shadowFailed++;
        this.logger?.warn(
          { tenant: tag.tenant, intent: tag.intent, err: err instanceof Error ? err.message : String(err) },
          "calibration shadow call failed; sample dropped",
        );
        return;
      }
      const grade = await judge.grade({ prompt, edgeAnswer, cloudAnswer }).catch(() => undefined);
      if (grade === undefined) {
        this.stats.judgeDropped++;
        return;
      }
      this.stats.judged++;
      holder.estimator(tag.tenant, tag.intent).record(tag.score, grade);
    })();
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
    return true;
  }

  /** Every estimator's threshold and estimate, for metrics and the admin view. */
  snapshot(): ReturnType<ThresholdHolder["snapshot"]> {
    return this.holder?.snapshot() ?? [];
  }

  /** Resolves when the shadow calls under way have been judged (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private holderFor(route: CalibrationRoute, online: Online): ThresholdHolder {
    const base = route.heuristic.complexity_threshold ?? 0.069;
    const own = route.heuristic.intent_thresholds ?? {};
    const target = route.target_quality ?? 1;
    const cloudQuality = route.calibration?.cloud_quality;
    const signature = JSON.stringify([target, base, own, cloudQuality, online.min_samples, online.hysteresis, online.shadow_fraction, online.max_per_minute]);
    if (this.holder && signature === this.signature) return this.holder;
    this.signature = signature;
    this.sampler = new ShadowSampler({
      fraction: online.shadow_fraction,
      maxPerMinute: online.max_per_minute,
      ...(this.opts.random && { random: this.opts.random }),
    });
    this.holder = new ThresholdHolder(
      (tenant, intent) =>
        new QualityEstimator({
          target,
          initialThreshold: own[intent] ?? base,
          ...(cloudQuality !== undefined && { cloudQuality }),
          minSamples: online.min_samples,
          hysteresis: online.hysteresis,
          onChange: (change) => this.moved(tenant, intent, change),
        }),
    );
    return this.holder;
  }

  private moved(tenant: string, intent: string, change: ThresholdChange): void {
    if (change.direction === "up") this.stats.movesUp++;
    else this.stats.movesDown++;
    const e = change.estimate;
    this.logger?.info(
      {
        calibration: { tenant, intent, from: change.from, to: change.to, direction: change.direction, reason: change.reason },
        estimate: { quality: e.quality, lower: e.lower, upper: e.upper, share: e.share, samples: e.samples },
      },
      "calibration threshold moved",
    );
  }

  private judge(name: Online["judge"], cloudComplete: (prompt: string) => Promise<string>): Judge {
    if (name === "cloud") return cloudJudge(cloudComplete);
    if (name === "embedding") return this.embed ? embeddingJudge(this.embed) : { name: "embedding", grade: () => Promise.resolve(undefined) };
    return exactMatchJudge;
  }
}

/** The last user turn's text, what the judges see as the request. */
function promptText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    return typeof m.content === "string" ? m.content : m.content.map((p) => ("text" in p ? p.text : "")).join("\n");
  }
  return "";
}
