/**
 * Test fixture: a scripted ext_proc server, named recording upstreams (one cluster each) and the
 * Envoy stand-in wired to them, closed together.
 */
import type { ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ClusterOptions, EnvoyOptions, ExtProcOptions } from "./config.ts";
import { startEnvoy, type EnvoyHarness } from "./envoy.ts";
import { matchingResponse } from "./messages.ts";
import { startScriptedExtProc, type Script, type ScriptedExtProc, type ScriptStep } from "./scripted-extproc.ts";
import { startUpstream, type TestUpstream, type UpstreamHandler } from "./test-http.ts";

/** Options of `harness`. */
export interface FixtureOptions {
  /** The processor's behaviour (default: continue everything). */
  script?: Script;
  /** ext_proc filter options besides the address. */
  extProc?: Omit<ExtProcOptions, "address">;
  /** Upstreams by cluster name, each with its handler (default: one echo upstream "main"). */
  upstreams?: Record<string, UpstreamHandler | undefined>;
  /** Extra clusters (e.g. ORIGINAL_DST). */
  clusters?: Record<string, ClusterOptions>;
  routes?: EnvoyOptions["routes"];
  /** Default: the first upstream; null for none (unmatched requests get 404). */
  defaultCluster?: string | null;
  bufferLimitBytes?: number;
  /** The simulated downstream client certificate. */
  peerCertificate?: EnvoyOptions["peerCertificate"];
  /** The connection's restored original destination (an Istio sidecar's iptables redirect). */
  originalDestination?: string;
  /** The router's `suppress_envoy_headers`. */
  suppressEnvoyHeaders?: boolean;
}

/** Everything a test talks to. */
export interface Fixture {
  envoy: EnvoyHarness;
  extProc: ScriptedExtProc;
  upstreams: Record<string, TestUpstream>;
  close(): Promise<void>;
}

/** Answers every message with its empty CONTINUE response. */
export const continueAll: Script = (message) => [matchingResponse(message)];

/** A script that answers `kind` messages with `steps(message)` and continues all others. */
export function on(kind: ProcessingRequest__Output["request"], steps: (m: ProcessingRequest__Output) => ScriptStep[]): Script {
  return (message) => (message.request === kind ? steps(message) : [matchingResponse(message)]);
}

/** Starts the processor, the upstreams and the stand-in. */
export async function harness(options: FixtureOptions = {}): Promise<Fixture> {
  const extProc = await startScriptedExtProc(options.script ?? continueAll);
  const upstreams: Record<string, TestUpstream> = {};
  for (const [name, handler] of Object.entries(options.upstreams ?? { main: undefined })) {
    upstreams[name] = await startUpstream(name, handler);
  }
  const clusters: Record<string, ClusterOptions> = { ...options.clusters };
  for (const [name, upstream] of Object.entries(upstreams)) clusters[name] = { url: upstream.url };
  const envoy = await startEnvoy({
    extProc: { address: extProc.address, ...options.extProc },
    routes: options.routes,
    defaultCluster: options.defaultCluster === null ? undefined : (options.defaultCluster ?? Object.keys(upstreams)[0]),
    clusters,
    bufferLimitBytes: options.bufferLimitBytes,
    peerCertificate: options.peerCertificate,
    originalDestination: options.originalDestination,
    suppressEnvoyHeaders: options.suppressEnvoyHeaders,
  });
  return {
    envoy,
    extProc,
    upstreams,
    close: async () => {
      await envoy.close();
      await extProc.close();
      for (const upstream of Object.values(upstreams)) await upstream.close();
    },
  };
}
