/**
 * What this process knows of each provider's health: its circuit breaker and its retry budget,
 * made on first use and kept for the process (the runtime's snapshots share one). Breaker
 * transitions are logged; their states are read by the `gearbox_provider_breaker_state` gauge.
 */
import type { Logger } from "../../common/telemetry/logger.ts";
import { BREAKER_STATE_VALUE, CircuitBreaker, type BreakerState } from "./breaker.ts";
import type { ResilienceConfig } from "./config-schema.ts";
import { RetryBudget } from "./retry-budget.ts";

export class ProviderHealth {
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly budgets = new Map<string, RetryBudget>();

  constructor(
    private readonly settings: ResilienceConfig,
    private readonly logger?: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  breaker(provider: string): CircuitBreaker {
    let breaker = this.breakers.get(provider);
    if (!breaker) {
      breaker = new CircuitBreaker(this.settings.breaker, this.now, ({ from, to, reason }) => {
        const log = { provider, from, to, reason };
        if (to === "open") this.logger?.warn(log, "provider breaker opened");
        else this.logger?.info(log, `provider breaker ${to === "closed" ? "closed" : "half-open"}`);
      });
      this.breakers.set(provider, breaker);
    }
    return breaker;
  }

  budget(provider: string): RetryBudget {
    let budget = this.budgets.get(provider);
    if (!budget) this.budgets.set(provider, (budget = new RetryBudget(this.settings.retry, this.now)));
    return budget;
  }

  /** Every provider's breaker state, as gauge values (0 closed, 1 half-open, 2 open). */
  states(): [string, number][] {
    return [...this.breakers].map(([name, b]) => [name, BREAKER_STATE_VALUE[b.state satisfies BreakerState]]);
  }
}
