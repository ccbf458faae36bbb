/** `gearbox serve` / `gearbox extproc`: start the ext_proc gRPC server and the HTTP front door. */
import { loadConfig, type GatewayConfig } from "../extproc/config/load.ts";
import { startExtProcServer, type ExtProcServer } from "../extproc/grpc/server.ts";
import { startFrontDoor, type FrontDoor } from "../extproc/http/front-door.ts";
import path from "node:path";
import { loadPlugins } from "../extproc/routing/policy/index.ts";
import { createLogger } from "../extproc/telemetry/logger.ts";

export interface Running {
  config: GatewayConfig;
  extProc: ExtProcServer;
  frontDoor: FrontDoor;
  stop(): Promise<void>;
}

export type ServeMode = "serve" | "extproc";

/** Lines telling the operator what runs, where, and what is not configured. */
export function describe(mode: ServeMode, config: GatewayConfig, ports: { extProc: number; http: number }): string[] {
  const lines = [
    `gearbox ${mode}: config ${config.source ?? "(none found: embedded defaults)"}`,
    `  ext_proc gRPC   ${config.listen.host}:${ports.extProc}  (envoy.service.ext_proc.v3.ExternalProcessor, grpc.health.v1)`,
    `  front door      http://${config.listen.host}:${ports.http}  (POST /v1/chat/completions, /v1/embeddings, /v1/messages; GET /v1/models, /healthz)`,
    `  state           in-memory${process.env.REDIS_URL ? " (REDIS_URL is set, but no store uses Redis in this version)" : ""}`,
  ];
  for (const p of config.providers) {
    const key = p.auth === "none" ? "no credentials needed" : p.apiKey === undefined ? `NO KEY (${p.keySource}): requests go without credentials` : `key from ${p.keySource}`;
    lines.push(`  provider        ${p.name} (${p.kind}) ${p.baseUrl.href}${p.isDefault ? " [default]" : ""}: ${key}`);
  }
  lines.push("  not running     xDS control plane, admin API, metrics (not part of this version); edge agents run as `gearbox edge-agent`");
  return lines;
}

export async function serve(mode: ServeMode): Promise<Running> {
  const loaded = loadConfig();
  if (!loaded.ok) {
    throw new ConfigError(loaded.errors);
  }
  const config = loaded.value;
  const logger = createLogger(config.logging.level);
  const plugins = await loadPlugins(config.route.plugins.map((p) => ({ name: p.name, module: p.module, timeoutMs: p.timeout_ms })), config.source ? path.dirname(path.resolve(config.source)) : process.cwd());
  if (!plugins.ok) throw new ConfigError(plugins.errors);
  const deps = { config, logger, plugins: plugins.value };
  const extProc = await startExtProcServer(deps, config.listen.extproc_port, config.listen.host);
  const frontDoor = await startFrontDoor(deps, config.listen.http_port, config.listen.host);
  for (const line of describe(mode, config, { extProc: extProc.port, http: frontDoor.port })) console.log(line);
  return {
    config,
    extProc,
    frontDoor,
    stop: async () => {
      await Promise.all([extProc.drain(), frontDoor.close()]);
    },
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}
