/**
 * `gearbox ca`: what it writes is checked with Node's own X.509 parser and TLS stack (a real
 * handshake on loopback), not with the code that built it.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import tls from "node:tls";
import { X509Certificate } from "node:crypto";
import { parse } from "yaml";
import type { CliIo } from "../admin-client.ts";
import { describeCertificate, signedBy, signLeaf } from "./authority.ts";
import { readCa, readLeaf } from "./files.ts";
import { runCa } from "./main.ts";

function io(): CliIo & { stdout: string; stderr: string } {
  const r = {
    stdout: "",
    stderr: "",
    out: (t: string) => void (r.stdout += t),
    err: (t: string) => void (r.stderr += t),
    env: {},
  };
  return r;
}

const root = mkdtempSync(path.join(tmpdir(), "gearbox-ca-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A TLS handshake on loopback: server with `leaf`, client trusting `ca`, asking for `servername`. */
async function handshake(leaf: { certPem: string; keyPem: string }, ca: string, servername: string): Promise<string | undefined> {
  const server = tls.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (s) => s.end());
  server.on("tlsClientError", () => undefined);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  try {
    return await new Promise<string | undefined>((resolve) => {
      const socket = tls.connect({ host: "127.0.0.1", port, servername, ca }, () => {
        socket.end();
        resolve(undefined);
      });
      socket.on("error", (err: NodeJS.ErrnoException) => resolve(`${err.code ?? ""} ${err.message}`));
    });
  } finally {
    server.close();
  }
}

void describe("gearbox ca", () => {
  const dir = path.join(root, "ca");
  const out = path.join(root, "leaves");

  void it("init writes a CA limited to the provider hosts, key 0600, and a Secret manifest", () => {
    const r = io();
    assert.equal(runCa(["init", "--dir", dir, "--secret", "gearbox/gearbox-ca"], r), 0, r.stderr);
    const cert = new X509Certificate(readFileSync(path.join(dir, "ca.crt")));
    assert.equal(cert.ca, true);
    assert.equal(statSync(path.join(dir, "ca.key")).mode & 0o777, 0o600);
    assert.deepEqual(describeCertificate(cert.toString()).permittedHosts, ["api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com"]);
    const secret = parse(r.stdout) as { kind: string; metadata: { namespace: string }; data: Record<string, string> };
    assert.equal(secret.kind, "Secret");
    assert.equal(secret.metadata.namespace, "gearbox");
    assert.equal(Buffer.from(secret.data["ca.crt"] ?? "", "base64").toString(), cert.toString());
    // A second init would orphan every leaf: refused without --force.
    const again = io();
    assert.equal(runCa(["init", "--dir", dir], again), 1);
    assert.match(again.stderr, /already holds a CA/);
  });

  void it("issue writes a leaf a TLS client accepts for its host, and only its host", async () => {
    const r = io();
    assert.equal(runCa(["issue", "--dir", dir, "--host", "api.openai.com", "--hours", "24", "--out", out], r), 0, r.stderr);
    const leaf = readLeaf(out, "api.openai.com");
    assert.ok(leaf);
    const ca = readCa(dir).current.certPem;
    const x = new X509Certificate(leaf.certPem);
    assert.equal(x.subjectAltName, "DNS:api.openai.com");
    assert.equal(x.checkHost("api.openai.com"), "api.openai.com");
    assert.ok(x.checkIssued(new X509Certificate(ca)));
    assert.ok(new Date(x.validTo).getTime() - Date.now() <= 24 * 3_600_000);
    assert.equal(readlinkSync(path.join(out, "api.openai.com", "..data")).startsWith(".."), true);
    assert.equal(await handshake(leaf, ca, "api.openai.com"), undefined);
    assert.match((await handshake(leaf, ca, "api.anthropic.com")) ?? "", /^ERR_TLS_CERT_ALTNAME_INVALID /);
  });

  void it("issue as Secrets: one kubernetes.io/tls Secret per host, named as istio/components/trust mounts them", () => {
    const r = io();
    assert.equal(
      runCa(["issue", "--dir", dir, "--host", "api.openai.com", "--host", "api.anthropic.com", "--secret-namespace", "istio-system"], r),
      0,
      r.stderr,
    );
    const docs = r.stdout.split(/^---$/m).map((d) => parse(d) as { type: string; metadata: { name: string; namespace: string } });
    assert.deepEqual(
      docs.map((d) => [d.type, d.metadata.namespace, d.metadata.name]),
      [
        ["kubernetes.io/tls", "istio-system", "gearbox-intercept-api-openai-com"],
        ["kubernetes.io/tls", "istio-system", "gearbox-intercept-api-anthropic-com"],
      ],
    );
  });

  void it("refuses a host outside the CA's nameConstraints; TLS clients would too", async () => {
    const r = io();
    assert.equal(runCa(["issue", "--dir", dir, "--host", "example.com", "--out", out], r), 1);
    assert.match(r.stderr, /may only sign for .* not example\.com/);
    // A leaf signed past that check with the same CA key: Node's TLS (OpenSSL) enforces the
    // CA's nameConstraints and refuses it, even though the name matches the certificate.
    const ca = readCa(dir).current;
    const forged = signLeaf(ca, { host: "example.com", notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 3_600_000) });
    assert.match((await handshake(forged, ca.certPem, "example.com")) ?? "", /permitted subtree violation/);
  });

  void it("rotate keeps a fresh leaf, replaces one inside the renewal window, and the old one still verifies", async () => {
    const first = readLeaf(out, "api.openai.com");
    const kept = io();
    assert.equal(runCa(["rotate", "--dir", dir, "--host", "api.openai.com", "--hours", "24", "--renew-within", "8", "--out", out], kept), 0, kept.stderr);
    assert.equal(kept.stdout, "kept api.openai.com\n");
    assert.equal(readLeaf(out, "api.openai.com")?.certPem, first?.certPem);
    const later = new Date(Date.now() + 20 * 3_600_000);
    const { parseCaArgs, runCaVerb } = await import("./main.ts");
    const rotated = io();
    runCaVerb(parseCaArgs(["rotate", "--dir", dir, "--host", "api.openai.com", "--hours", "24", "--renew-within", "8", "--out", out]), rotated, later);
    assert.match(rotated.stdout, /^rotated api\.openai\.com \(expires /);
    const second = readLeaf(out, "api.openai.com");
    assert.notEqual(second?.certPem, first?.certPem);
    assert.ok(first && signedBy(first.certPem, readCa(dir).current.certPem), "the replaced leaf still chains: open connections are unaffected");
  });

  void it("rotate --ca keeps the previous CA trusted in bundle.crt until --retire-previous, and re-signs leaves", () => {
    const before = readCa(dir).current.certPem;
    assert.equal(runCa(["rotate", "--dir", dir, "--ca"], io()), 0);
    const bundle = readFileSync(path.join(dir, "bundle.crt"), "utf8");
    assert.ok(bundle.includes(before), "old CA still trusted");
    assert.ok(bundle.includes(readCa(dir).current.certPem), "new CA trusted");
    const r = io();
    assert.equal(runCa(["rotate", "--dir", dir, "--host", "api.openai.com", "--out", out], r), 0, r.stderr);
    assert.equal(r.stdout, "rotated api.openai.com (signed by another CA)\n");
    assert.equal(runCa(["rotate", "--dir", dir, "--retire-previous"], io()), 0);
    assert.ok(!readFileSync(path.join(dir, "bundle.crt"), "utf8").includes(before));
  });

  void it("bundle --configmap carries the CA alone and the CA after Node's roots", () => {
    const r = io();
    assert.equal(runCa(["bundle", "--dir", dir, "--configmap", "shop/gearbox-ca-bundle"], r), 0, r.stderr);
    const cm = parse(r.stdout) as { data: Record<string, string> };
    const ca = readCa(dir).current.certPem;
    assert.equal(cm.data["gearbox-ca.crt"], ca);
    assert.ok((cm.data["ca-bundle.crt"] ?? "").endsWith(ca));
    assert.ok((cm.data["ca-bundle.crt"] ?? "").split("BEGIN CERTIFICATE").length > 100, "system roots included");
  });

  void it("wrong usage exits 2 and names the problem", () => {
    for (const [args, message] of [
      [["issue", "--dir", dir, "--out", out], /needs at least one --host/],
      [["issue", "--dir", dir, "--host", "API.openai.com", "--out", out], /not a lower-case DNS host name/],
      [["issue", "--dir", dir, "--host", "api.openai.com"], /one of --out/],
      [["rotate", "--dir", dir, "--host", "api.openai.com", "--out", out, "--hours", "4", "--renew-within", "5"], /must be below --hours/],
      [["frob", "--dir", dir], /unknown subcommand 'frob'/],
    ] as const) {
      const r = io();
      assert.equal(runCa([...args], r), 2, args.join(" "));
      assert.match(r.stderr, message);
    }
  });
});
