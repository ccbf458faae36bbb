/**
 * What `gearbox --help`, `gearbox help <verb>`, `gearbox <verb> --help` and `gearbox --version`
 * print. Every environment variable the gateway or the edge agent reads is named here (a test
 * holds the code to that); the verbs' own usages live beside them and load only when asked for.
 */
import { readFileSync } from "node:fs";
import { PRESETS } from "../extproc/providers/catalog.ts";

/** The version in package.json. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}

/** Each preset's key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, …), as the config resolves them. */
const PROVIDER_KEYS = [...new Set(Object.values(PRESETS).flatMap((p) => (p.api_key_env ? [p.api_key_env] : [])))];

/** Wraps `words` into lines of at most `width` characters, each after `indent`. */
function wrap(words: string[], indent: string, width = 100): string {
  const lines: string[] = [];
  let line = "";
  for (const word of words) {
    if (line !== "" && indent.length + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines.map((l) => indent + l).join("\n");
}

export const USAGE = `usage: gearbox <command> [options]        gearbox help <command>   gearbox --version

commands:
  serve       all-in-one: control plane (18000) + ext_proc gRPC (50051) + OpenAI-compatible front door (8080),
              embedded defaults
  extproc     the ext_proc service alone (gRPC + front door), for a Deployment behind Envoy/Istio; follows the
              control plane at GEARBOX_XDS_ADDRESS (or xds.address) when set
  xds         the control plane alone: ADS for Envoy and ext_proc replicas, the edge-agent registry (18000)
  edge-agent  node-local inference (llama.cpp, Ollama, ONNX) with logprobs and confidence on 8088
  tenants     list | get <id> | put <file> | delete <id>          (admin API)
  keys        create --role call|admin [--tenant t] [--name n] | list [--tenant t] | revoke <id>   (admin API)
  limits      show: who is being throttled now                     (admin API)
  report      <logs…>: HTML report, Markdown summary and JSON of request logs or replay outputs (plain or gzip)
  replay      <traffic file> --target <url | grpc://host:port>: send recorded traffic through a running Gearbox
  calibrate   <labelled file|folder>… [--target-quality 0.95]: fit the routing threshold on a confidence bound, print the route: policy
  ca          init | issue | rotate | bundle: the CA that lets the mesh terminate apps' HTTPS calls to
              provider hosts (opt-in per host), short-lived leaves per host
  demo        the whole loop on this machine, no key, no network: serve + an edge agent on a tiny model +
              a stand-in cloud, a scripted mix of requests and what Gearbox did with each (npm run demo)
  help        this text; 'gearbox help <command>' (or 'gearbox <command> --help') for one command

environment:
  GEARBOX_CONFIG        config file (default ./gearbox.yaml; none → embedded defaults; named but absent → error)
  GEARBOX_EXTPROC_PORT  GEARBOX_HTTP_PORT  GEARBOX_ADMIN_PORT  GEARBOX_METRICS_PORT  GEARBOX_XDS_PORT
  GEARBOX_EDGE_PORT     port overrides of listen.extproc_port, http_port, admin_port, metrics_port, xds_port,
                        edge_port (0 = any free port)
  GEARBOX_XDS_ADDRESS   host:port of the control plane for 'gearbox extproc' and 'gearbox edge-agent' to follow
  REDIS_URL             shared state (tenants, keys, limits, caches) on Redis instead of in memory
  OPENAI_API_KEY        key for the default 'openai' provider; OPENAI_BASE_URL its base URL
  provider keys         each preset's variable unless the config sets api_key_env:
${wrap(PROVIDER_KEYS, "                        ")}
  GEARBOX_ADMIN_KEY     the bootstrap admin key (serve: refused if it is a placeholder); the admin key the
                        tenants/keys/limits commands send
  GEARBOX_ADMIN_URL     where those commands find the admin API (default http://127.0.0.1:8081)
  OTEL_EXPORTER_OTLP_ENDPOINT  where traces go when tracing is on (default http://localhost:4317)
  NODE_NAME             the Kubernetes node this process runs on (edge agents on the same node are preferred)
  GEARBOX_EDGE_ADVERTISE  GEARBOX_EDGE_ADMIN_TOKEN  GEARBOX_LOG_LEVEL
                        edge agent only: see 'gearbox help edge-agent'
`;

/** The servers' verbs: what each runs, on which settings. */
export const SERVER_USAGE: Record<"serve" | "extproc" | "xds", string> = {
  serve: `usage: gearbox serve

All in one process, in-memory state (REDIS_URL for Redis):
  control plane     listen.xds_port      GEARBOX_XDS_PORT      18000  ADS for Envoy, the edge-agent registry
  ext_proc gRPC     listen.extproc_port  GEARBOX_EXTPROC_PORT  50051  envoy.service.ext_proc.v3.ExternalProcessor
  front door        listen.http_port     GEARBOX_HTTP_PORT      8080  OpenAI/Anthropic-compatible HTTP API
  metrics           listen.metrics_port  GEARBOX_METRICS_PORT   9464  Prometheus /metrics
  admin API         listen.admin_port    GEARBOX_ADMIN_PORT     8081  only with GEARBOX_ADMIN_KEY set
Config: GEARBOX_CONFIG (default ./gearbox.yaml; none → embedded defaults). 'gearbox help' lists every variable.
Stops on SIGTERM/SIGINT after draining in-flight requests.
`,
  extproc: `usage: gearbox extproc

The ext_proc service alone, for a Deployment behind Envoy/Istio:
  ext_proc gRPC     listen.extproc_port  GEARBOX_EXTPROC_PORT  50051
  front door        listen.http_port     GEARBOX_HTTP_PORT      8080
  metrics           listen.metrics_port  GEARBOX_METRICS_PORT   9464
  admin API         listen.admin_port    GEARBOX_ADMIN_PORT     8081  only with GEARBOX_ADMIN_KEY set
Follows the control plane at xds.address / GEARBOX_XDS_ADDRESS (host:port) when set (policy and live
edge agents); else the config file alone. REDIS_URL shares state between replicas.
`,
  xds: `usage: gearbox xds

The control plane alone: ADS (SotW and delta) for Envoy and ext_proc replicas, Gearbox's routing
policy and edge assignments, the registry of live edge agents.
  control plane     listen.xds_port      GEARBOX_XDS_PORT      18000
  metrics           listen.metrics_port  GEARBOX_METRICS_PORT   9464
Re-reads the config file (GEARBOX_CONFIG, default ./gearbox.yaml) when it changes; an invalid file is
logged and the last good config stays.
`,
};

/** Announced in the design, not built yet. */
export const PLANNED: ReadonlySet<string> = new Set<string>();
