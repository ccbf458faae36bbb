/** The edge agent's Prometheus metrics (one registry per agent, served on `/metrics`). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export class AgentMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "gearbox_edge_requests_total",
    help: "Requests by endpoint, model and HTTP status.",
    labelNames: ["endpoint", "model", "status"],
    registers: [this.registry],
  });
  readonly tokens = new Counter({ name: "gearbox_edge_generated_tokens_total", help: "Tokens generated.", labelNames: ["model"], registers: [this.registry] });
  readonly promptTokens = new Counter({
    name: "gearbox_edge_prompt_tokens_total",
    help: "Prompt tokens processed.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly rejected = new Counter({
    name: "gearbox_edge_rejected_total",
    help: "Requests refused before generation, by reason.",
    labelNames: ["model", "reason"],
    registers: [this.registry],
  });
  readonly inflight = new Gauge({
    name: "gearbox_edge_inflight_requests",
    help: "Requests generating now.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly queued = new Gauge({
    name: "gearbox_edge_queued_requests",
    help: "Requests waiting for a slot.",
    labelNames: ["model"],
    registers: [this.registry],
  });
  readonly loaded = new Gauge({
    name: "gearbox_edge_model_loaded",
    help: "1 for each loaded model.",
    labelNames: ["model", "engine"],
    registers: [this.registry],
  });
  readonly ttft = new Histogram({
    name: "gearbox_edge_time_to_first_token_seconds",
    help: "Time from request to first generated token.",
    labelNames: ["model"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: "gearbox_edge_request_duration_seconds",
    help: "Request duration.",
    labelNames: ["endpoint", "model"],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly confidence = new Histogram({
    name: "gearbox_edge_answer_confidence",
    help: "Confidence (geometric-mean token probability) of chat answers.",
    labelNames: ["model"],
    buckets: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "gearbox_edge_" });
  }
}
