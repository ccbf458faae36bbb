/**
 * Before a mode starts its servers: every port it listens on is free, or one line naming the
 * setting that moves it (`port 8080 is in use (listen.http_port / GEARBOX_HTTP_PORT)`). Also
 * turns a listen error that still happens at start (a race) into one line.
 */
import { createServer } from "node:net";
import { PORT_ENV, type GatewayConfig } from "../extproc/config/load.ts";
import { ADMIN_KEY_ENV } from "../extproc/governance/keys.ts";
import { fail, ok, type Result } from "../common/result.ts";

export type ListenKey = (typeof PORT_ENV)[string];

/** Where a port comes from: the config key and the env variable that overrides it. */
export function settingOf(key: ListenKey): string {
  const env = Object.entries(PORT_ENV).find(([, k]) => k === key)?.[0];
  return `listen.${key}${env ? ` / ${env}` : ""}`;
}

/** The ports `mode` listens on (0 = any free port, never checked). */
export function portsOf(mode: "serve" | "extproc" | "xds", config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): { key: ListenKey; port: number }[] {
  const keys: ListenKey[] = [];
  if (mode !== "extproc") keys.push("xds_port");
  if (mode !== "xds") {
    keys.push("extproc_port", "http_port");
    // The admin API runs only with a bootstrap admin key (cli/governance.ts).
    if (env[ADMIN_KEY_ENV]) keys.push("admin_port");
  }
  keys.push("metrics_port");
  return keys.map((key) => ({ key, port: config.listen[key] })).filter((p) => p.port !== 0);
}

/** One line for a failed listen, naming the setting when it is known. */
export function listenProblem(err: unknown, host: string, port: number, key?: ListenKey): string {
  const code: string = (err as NodeJS.ErrnoException | undefined)?.code ?? "";
  const where = key ? ` (${settingOf(key)})` : "";
  switch (code) {
    case "EADDRINUSE":
      return `port ${port} is in use${where}`;
    case "EACCES":
      return `port ${port} needs privileges this process lacks${where}`;
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot listen on ${host}: no such local address (listen.host)`;
    default:
      return `cannot listen on ${host}:${port}${where} (${code || (err instanceof Error ? err.message : String(err))})`;
  }
}

function probe(host: string, port: number): Promise<unknown> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", resolve);
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** Every port `mode` needs is distinct and free on `listen.host`; else one problem per port. */
export async function checkPorts(mode: "serve" | "extproc" | "xds", config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): Promise<Result<void>> {
  const ports = portsOf(mode, config, env);
  const problems: string[] = [];
  const seen = new Map<number, ListenKey>();
  for (const { key, port } of ports) {
    const first = seen.get(port);
    if (first !== undefined) problems.push(`port ${port} is set twice (${settingOf(first)} and ${settingOf(key)})`);
    seen.set(port, key);
  }
  if (problems.length > 0) return fail(...problems);
  for (const { key, port } of ports) {
    const err = await probe(config.listen.host, port);
    if (err !== undefined) problems.push(listenProblem(err, config.listen.host, port, key));
  }
  return problems.length > 0 ? fail(...problems) : ok(undefined);
}

/** A listen error from a server's start (`EADDRINUSE`, also inside gRPC's bind message) as one line, or undefined. */
export function startProblem(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const sys = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (sys.syscall === "listen" && sys.port !== undefined) return listenProblem(err, sys.address ?? "", sys.port);
  // @grpc/grpc-js: "No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 0.0.0.0:50051]"
  const grpc = /listen (E[A-Z]+): [^[\]]*? (\S+):(\d+)\]/.exec(err.message);
  if (grpc) return listenProblem(Object.assign(new Error(grpc[1]), { code: grpc[1] }), grpc[2] ?? "", Number(grpc[3]));
  return undefined;
}
