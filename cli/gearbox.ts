/** The `gearbox` command line. */
import { processIo } from "./admin-client.ts";
import { runKeys } from "./keys.ts";
import { runLimits } from "./limits.ts";
import { ConfigError, serve, type ServeMode } from "./serve.ts";
import { runTenants } from "./tenants.ts";

const USAGE = `usage: gearbox <command>

commands:
  serve       all-in-one: control plane (18000) + ext_proc gRPC (50051) + OpenAI-compatible front door (8080),
              embedded defaults
  extproc     the ext_proc service alone (gRPC + front door), for a Deployment behind Envoy/Istio; follows the
              control plane at GEARBOX_XDS_ADDRESS (or xds.address) when set
  xds         the control plane alone: ADS for Envoy and ext_proc replicas, the edge-agent registry (18000)
  edge-agent  node-local inference (llama.cpp, Ollama, ONNX) with logprobs and confidence on 8088;
              'gearbox edge-agent --help' for its options
  tenants     list | get <id> | put <file> | delete <id>          (admin API)
  keys        create --role call|admin [--tenant t] [--name n] | list [--tenant t] | revoke <id>   (admin API)
  limits      show: who is being throttled now                     (admin API)
  help        this text

environment:
  GEARBOX_CONFIG        config file (default ./gearbox.yaml; none → embedded defaults)
  GEARBOX_EXTPROC_PORT  GEARBOX_HTTP_PORT  GEARBOX_XDS_PORT  GEARBOX_METRICS_PORT  port overrides
  GEARBOX_XDS_ADDRESS   host:port of the control plane for 'gearbox extproc' to follow
  OPENAI_API_KEY        key for the default 'openai' provider; OPENAI_BASE_URL its base URL
  GEARBOX_ADMIN_KEY     the bootstrap admin key (serve: refused if it is a placeholder); the admin key the
                        tenants/keys/limits commands send
  GEARBOX_ADMIN_URL     where those commands find the admin API (default http://127.0.0.1:8081)
`;

const PLANNED = new Set(["report", "replay"]);

async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? "help";
  switch (command) {
    case "serve":
    case "extproc":
    case "xds":
      return runServer(command);
    case "edge-agent":
      return runEdge(argv.slice(1));
    case "tenants":
      return runTenants(argv.slice(1), processIo);
    case "keys":
      return runKeys(argv.slice(1), processIo);
    case "limits":
      return runLimits(argv.slice(1), processIo);
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(
        PLANNED.has(command) ? `gearbox: '${command}' is not available in this version yet\n` : `gearbox: unknown command '${command}'\n\n${USAGE}`,
      );
      return 2;
  }
}

async function runEdge(args: string[]): Promise<number> {
  const { EDGE_AGENT_USAGE, runEdgeAgent } = await import("../edge-agent/main.ts");
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(EDGE_AGENT_USAGE);
    return 0;
  }
  let agent;
  try {
    agent = await runEdgeAgent(args);
  } catch (err) {
    process.stderr.write(`gearbox edge-agent: ${err instanceof Error ? err.message : String(err)}\n\n${EDGE_AGENT_USAGE}`);
    return 1;
  }
  const stop = (signal: string) => {
    console.log(`gearbox edge-agent: ${signal} received, stopping`);
    agent.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error("gearbox edge-agent: stop failed", err);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  return new Promise<number>(() => undefined);
}

async function runServer(mode: ServeMode): Promise<number> {
  let running;
  try {
    running = await serve(mode);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gearbox: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const stop = (signal: string) => {
    console.log(`gearbox: ${signal} received, draining`);
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error("gearbox: drain failed", err);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  return new Promise<number>(() => undefined);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    console.error("gearbox: fatal:", err);
    process.exit(1);
  },
);
