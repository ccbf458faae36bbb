/**
 * TLS at the hop (tls.ts): the listener terminates per SNI; a TLS cluster verifies the
 * upstream's chain and name (UpstreamTlsContext trusted_ca + auto_san_validation) and a failed
 * verification is a 503 upstream connect failure, never a request sent unverified.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import https from "node:https";
import { after, before, describe, test } from "node:test";
import { createCa, issueLeaf, type KeyPair } from "../../cli/ca/authority.ts";
import { startEnvoy, type EnvoyHarness } from "./envoy.ts";
import { startNoopExtProc } from "./noop-extproc.ts";

/** An HTTPS upstream serving `leaf`, answering 200 "upstream ok". */
async function tlsUpstream(leaf: KeyPair): Promise<{ url: string; close: () => Promise<void>; hits: () => number }> {
  let hits = 0;
  const server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (_req, res) => {
    hits += 1;
    res.end("upstream ok");
  });
  server.on("tlsClientError", () => undefined);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    hits: () => hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

void describe("Envoy harness: upstream TLS origination", () => {
  // Stands in for the public PKI that signs the real provider's certificate.
  const publicCa = createCa({ hosts: ["api.openai.com", "api.anthropic.com"], days: 1 });
  const otherCa = createCa({ hosts: ["api.openai.com"], days: 1 });
  let extProc: Awaited<ReturnType<typeof startNoopExtProc>>;
  let good: Awaited<ReturnType<typeof tlsUpstream>>;
  let wrongName: Awaited<ReturnType<typeof tlsUpstream>>;
  const harnesses: EnvoyHarness[] = [];

  before(async () => {
    extProc = await startNoopExtProc();
    good = await tlsUpstream(issueLeaf(publicCa, { host: "api.openai.com", hours: 1 }));
    wrongName = await tlsUpstream(issueLeaf(publicCa, { host: "api.anthropic.com", hours: 1 }));
  });
  after(async () => {
    for (const h of harnesses) await h.close();
    await Promise.all([good.close(), wrongName.close()]);
    await extProc.close();
  });

  async function through(url: string, trustedCa: string): Promise<{ status: number; body: string }> {
    const envoy = await startEnvoy({
      extProc: { address: extProc.address },
      defaultCluster: "openai",
      clusters: { openai: { url, tls: { sni: "api.openai.com", trustedCa } } },
    });
    harnesses.push(envoy);
    const res = await fetch(`${envoy.url}/v1/models`);
    return { status: res.status, body: await res.text() };
  }

  test("a provider certificate that chains to the trusted CA and names the SNI host: forwarded", async () => {
    assert.deepEqual(await through(good.url, publicCa.certPem), { status: 200, body: "upstream ok" });
  });

  test("a chain to another CA: 503 with the TLS failure, nothing sent upstream", async () => {
    const hits = good.hits();
    const r = await through(good.url, otherCa.certPem);
    assert.equal(r.status, 503);
    assert.match(r.body, /transport failure reason: TLS_error: UNABLE_TO_VERIFY_LEAF_SIGNATURE/);
    assert.equal(good.hits(), hits);
  });

  test("a certificate for another name: 503 (auto_san_validation)", async () => {
    const r = await through(wrongName.url, publicCa.certPem);
    assert.equal(r.status, 503);
    assert.match(r.body, /TLS_error: ERR_TLS_CERT_ALTNAME_INVALID/);
    assert.equal(wrongName.hits(), 0);
  });
});
