/**
 * One server per benchmark process, so the load generator, Envoy (the harness), Gearbox and the
 * upstream do not share an event loop. Started by `extproc.bench.ts` with an IPC channel; sends
 * `{ ready: { …ports } }` once listening. Gearbox logs at `info` like a real deployment (its
 * stdout goes to /dev/null): the per-request log line is part of the measured cost.
 */
import { startOpenAIUpstream } from "../test/emulators/openai-upstream.ts";
import { startEnvoy } from "../test/harness/envoy.ts";
import { startNoopExtProc } from "../test/harness/noop-extproc.ts";
import { shippedEnvoySettings } from "../test/support/envoy-settings.ts";
import { openAIProviderYaml, testConfig } from "../test/support/gateway.ts";
import { startExtProcServer } from "../extproc/grpc/server.ts";
import { startFrontDoor } from "../extproc/http/front-door.ts";
import { createLogger } from "../common/telemetry/logger.ts";
import { createResponseCache } from "../extproc/cache/create-response-cache.ts";
import { Runtime } from "../extproc/runtime/runtime.ts";
import { bareProxy, recordedUpstream } from "./cpu/servers.ts";

const [role, ...args] = process.argv.slice(2);

async function start(): Promise<Record<string, number | string>> {
  switch (role) {
    case "upstream": {
      const upstream = await startOpenAIUpstream();
      return { port: upstream.port };
    }
    case "gearbox": {
      // args[1]: extra config YAML (e.g. `cache: { exact: { enable: true } }`).
      const config = testConfig(openAIProviderYaml(args[0] ?? "", args[1] ?? ""), { TEST_PROVIDER_KEY: "sk-bench" });
      const logger = createLogger("info");
      const { cache } = createResponseCache(config, { logger });
      const deps = { runtime: new Runtime(config), logger, ...(cache && { cache }) };
      const extProc = await startExtProcServer(deps, 0, "127.0.0.1");
      const frontDoor = await startFrontDoor(deps, 0, "127.0.0.1");
      return { extProcPort: extProc.port, httpPort: frontDoor.port };
    }
    case "recorded-upstream":
      return { port: await recordedUpstream() };
    case "bare-proxy":
      return { port: await bareProxy(args[0] ?? "") };
    case "noop": {
      const noop = await startNoopExtProc();
      return { address: noop.address };
    }
    case "envoy": {
      const shipped = shippedEnvoySettings();
      const envoy = await startEnvoy({
        extProc: { ...shipped.extProc, address: args[0] ?? "" },
        routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }],
        defaultCluster: "openai",
        clusters: { openai: { url: args[1] ?? "" } },
        bufferLimitBytes: shipped.bufferLimitBytes ?? 8 * 1024 * 1024,
        routeTimeoutMs: 60_000,
      });
      return { port: envoy.port };
    }
    case undefined:
    default:
      throw new Error(`unknown role '${role ?? ""}'`);
  }
}

start().then(
  (ready) => process.send?.({ ready }),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
