/**
 * TLS termination at the hop (issue 26): the same Envoy harness chain (no-op ext_proc → local
 * upstream) reached over plain HTTP and over TLS terminated with a `gearbox ca` leaf (RSA 2048),
 * in one run, sequential requests (concurrency 1), rounds alternating between the four ways:
 *
 *   http keep-alive     one connection for every request
 *   https keep-alive    one TLS connection: the handshake is amortized away
 *   http new conn       a TCP connection per request
 *   https new conn      a full TLS handshake per request (no session resumption)
 *
 * The cost of termination per request is the difference to the plain path of the same kind.
 * Usage: node --import tsx bench/tls-hop.bench.ts [--requests 2000] [--rounds 3]
 */
import http from "node:http";
import https from "node:https";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createCa, issueLeaf } from "../cli/ca/authority.ts";
import { writeLeaf } from "../cli/ca/files.ts";
import { startEnvoy } from "../test/harness/envoy.ts";
import { startNoopExtProc } from "../test/harness/noop-extproc.ts";
import { median, numberArg } from "./processes.ts";

const REQUESTS = numberArg("requests", 2000);
const ROUNDS = numberArg("rounds", 3);
const HOST = "api.openai.com";

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-tls-bench-"));
  const ca = createCa({ hosts: [HOST], days: 1 });
  writeLeaf(dir, HOST, issueLeaf(ca, { host: HOST, hours: 1 }), "bench");
  const upstream = http.createServer((_req, res) => res.end('{"ok":true}'));
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const origin = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const extProc = await startNoopExtProc();
  const common = { extProc: { address: extProc.address }, defaultCluster: "up", clusters: { up: { url: origin } } };
  const plain = await startEnvoy(common);
  const tls = await startEnvoy({ ...common, downstreamTls: { serverNames: { [HOST]: { directory: path.join(dir, HOST) } } } });

  const ways = {
    "http keep-alive": { port: plain.port, secure: false, keepAlive: true },
    "https keep-alive": { port: tls.port, secure: true, keepAlive: true },
    "http new conn": { port: plain.port, secure: false, keepAlive: false },
    "https new conn": { port: tls.port, secure: true, keepAlive: false },
  } as const;
  type Way = keyof typeof ways;
  const results: Record<Way, number[]> = { "http keep-alive": [], "https keep-alive": [], "http new conn": [], "https new conn": [] };

  const one = (w: (typeof ways)[Way], agent: http.Agent | https.Agent) =>
    new Promise<void>((resolve, reject) => {
      const options = { host: "127.0.0.1", port: w.port, path: "/v1/models", headers: { host: HOST }, agent };
      const req = w.secure
        ? https.get({ ...options, servername: HOST, ca: ca.certPem, agent: agent as https.Agent }, (res) => res.resume().on("end", resolve))
        : http.get(options, (res) => res.resume().on("end", resolve));
      req.on("error", reject);
    });

  for (let round = 0; round < ROUNDS; round++) {
    for (const name of Object.keys(ways) as Way[]) {
      const w = ways[name];
      // maxCachedSessions 0: no TLS session resumption, every new connection is a full handshake.
      const agent = w.secure
        ? new https.Agent({ keepAlive: w.keepAlive, maxSockets: 1, maxCachedSessions: 0 })
        : new http.Agent({ keepAlive: w.keepAlive, maxSockets: 1 });
      const n = w.keepAlive ? REQUESTS : Math.round(REQUESTS / 4);
      for (let i = 0; i < 50; i++) await one(w, agent); // warm-up
      const start = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await one(w, agent);
      results[name].push(Number(process.hrtime.bigint() - start) / 1e3 / n);
      agent.destroy();
    }
  }
  const us = (name: Way) => median(results[name]);
  console.log(`per request, µs (median of ${ROUNDS} rounds; ${REQUESTS} keep-alive / ${Math.round(REQUESTS / 4)} new-connection requests each)`);
  for (const name of Object.keys(ways) as Way[]) console.log(`  ${name.padEnd(18)} ${us(name).toFixed(0)}`);
  console.log(`TLS termination, keep-alive:        +${(us("https keep-alive") - us("http keep-alive")).toFixed(0)} µs per request`);
  console.log(`TLS termination, full handshake:    +${(us("https new conn") - us("http new conn")).toFixed(0)} µs per request`);
  await Promise.all([plain.close(), tls.close()]);
  await extProc.close();
  upstream.close();
  rmSync(dir, { recursive: true, force: true });
}

void main();
