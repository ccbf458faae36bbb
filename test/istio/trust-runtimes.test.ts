/**
 * The trust component's settings work in the runtimes they are for (issue 26, "trust without
 * code changes"): the init container's script, as rendered, builds a Java truststore from the
 * CA bundle `gearbox ca bundle --configmap` prints (two CAs, as during a CA rotation), and real
 * clients given only the rendered environment (paths moved under a temporary directory) verify a
 * leaf from `gearbox ca` on a loopback TLS server answering for api.openai.com: Java's
 * HttpsURLConnection through JAVA_TOOL_OPTIONS, Python's urllib through SSL_CERT_FILE and
 * requests through REQUESTS_CA_BUNDLE. Without them, each fails verification. (Node's
 * NODE_EXTRA_CA_CERTS: test/e2e/https-intercept, with the official SDKs.) Name resolution is
 * pointed at 127.0.0.1 inside each client process, as the mesh's capture would do.
 */
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import YAML from "yaml";
import { readLeaf } from "../../cli/ca/files.ts";
import { runCa } from "../../cli/ca/main.ts";
import { arr, obj, ofKind, renderKustomize, type Manifest } from "./manifests.ts";

const run = promisify(execFile);
const HOST = "api.openai.com";
const root = mkdtempSync(path.join(tmpdir(), "gearbox-trust-rt-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** `cmd` on the PATH, resolved through symlinks; undefined when absent. */
function which(cmd: string): string | undefined {
  try {
    return realpathSync(execFileSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" }).trim());
  } catch {
    return undefined;
  }
}
const java = which("java");
const python = which("python3");
const pythonRequests =
  python !== undefined &&
  (() => {
    try {
      execFileSync(python, ["-c", "import requests"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();

/** The rendered paths, moved under the temporary root. */
const moved = (value: string): string => value.replaceAll("/etc/gearbox/", `${root}/etc/gearbox/`);

const [deployment] = ofKind(renderKustomize("test/istio/fixtures/trust-app"), "Deployment", "checkout") as [Manifest];
const pod = obj(obj(obj(deployment["spec"])["template"])["spec"]);
const envOf = (container: unknown): Record<string, string> =>
  Object.fromEntries(arr(obj(container)["env"]).map((e) => [String(obj(e)["name"]), moved(String(obj(e)["value"]))]));
const appEnv = envOf(arr(pod["containers"])[0]);
const init = obj(arr(pod["initContainers"]).find((c) => obj(c)["name"] === "gearbox-truststore"));
const TRUST_VARS = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "JAVA_TOOL_OPTIONS"];

const quiet = { out: () => undefined, err: () => undefined, env: {} };
let server: https.Server;
let port = 0;

before(async () => {
  const ca = path.join(root, "ca");
  assert.equal(runCa(["init", "--dir", ca], quiet), 0);
  // A CA rotation in progress: the bundle holds the new CA and the previous one.
  assert.equal(runCa(["rotate", "--dir", ca, "--ca"], quiet), 0);
  assert.equal(runCa(["issue", "--dir", ca, "--host", HOST, "--out", path.join(root, "leaves")], quiet), 0);
  let text = "";
  assert.equal(runCa(["bundle", "--dir", ca, "--configmap", "shop/gearbox-ca-bundle"], { ...quiet, out: (t: string) => void (text += t) }), 0);
  const bundleDir = path.join(root, "etc/gearbox/ca");
  mkdirSync(bundleDir, { recursive: true });
  mkdirSync(path.join(root, "etc/gearbox/truststore"), { recursive: true });
  for (const [file, content] of Object.entries(obj((YAML.parse(text) as Manifest)["data"]))) writeFileSync(path.join(bundleDir, file), String(content));
  const leaf = readLeaf(path.join(root, "leaves"), HOST);
  assert.ok(leaf);
  server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (_req, res) => res.end("through gearbox"));
  server.on("tlsClientError", () => undefined);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as { port: number }).port;
});
after(() => server?.close());

/** Runs a client with only PATH, HOME and `env`; its stdout, or the error it printed. */
async function client(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  try {
    const { stdout } = await run(cmd, args, { env: { PATH: process.env["PATH"] ?? "", HOME: root, ...env }, timeout: 60_000 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return `FAILED ${(e.stdout ?? "").trim()} ${(e.stderr ?? "").trim()}`;
  }
}

void describe("trust component settings in real runtimes", () => {
  void it("every container gets the four variables, pointing at the bundle files and the truststore", () => {
    for (const name of TRUST_VARS) assert.ok(appEnv[name], `${name} set`);
  });

  void describe("Java (JAVA_TOOL_OPTIONS + the init container's truststore)", { skip: java ? false : "no java on this machine" }, () => {
    const javaHome = java ? path.dirname(path.dirname(java)) : "";
    const probe = path.join(root, "Probe.java");
    const hostsFile = path.join(root, "java-hosts");
    before(async () => {
      const script = String(arr(init["command"])[2]);
      const initEnv = envOf(init);
      // Throws unless the script exits 0 (keytool reports its import on stderr).
      await run("sh", ["-c", script], { env: { PATH: process.env["PATH"] ?? "", JAVA_HOME: javaHome, ...initEnv } });
      writeFileSync(hostsFile, `127.0.0.1 ${HOST}\n`);
      writeFileSync(
        probe,
        [
          "import java.io.InputStream;",
          "import java.net.URL;",
          "import javax.net.ssl.HttpsURLConnection;",
          "public class Probe {",
          "  public static void main(String[] args) throws Exception {",
          "    HttpsURLConnection c = (HttpsURLConnection) new URL(args[0]).openConnection();",
          '    try (InputStream in = c.getInputStream()) { System.out.println(c.getResponseCode() + " " + new String(in.readAllBytes())); }',
          "  }",
          "}",
        ].join("\n"),
      );
    });

    void it("the truststore holds the JDK's roots and both CAs of the bundle, as trusted entries", async () => {
      const { stdout } = await run(path.join(javaHome, "bin/keytool"), [
        "-list",
        "-keystore",
        moved("/etc/gearbox/truststore/truststore.p12"),
        "-storepass",
        "changeit",
      ]);
      assert.match(stdout, /gearbox-ca-1, .*trustedCertEntry/);
      assert.match(stdout, /gearbox-ca-2, .*trustedCertEntry/);
      assert.doesNotMatch(stdout, /gearbox-ca-3/);
      const entries = Number(/contains (\d+) entries/.exec(stdout)?.[1]);
      assert.ok(entries > 50, `${entries} entries: the JDK's roots are kept (javax.net.ssl.trustStore replaces them)`);
    });

    void it("HttpsURLConnection verifies the gearbox leaf with JAVA_TOOL_OPTIONS, and refuses it without", async () => {
      const args = [`-Djdk.net.hosts.file=${hostsFile}`, probe, `https://${HOST}:${port}/v1/models`];
      assert.equal(await client(path.join(javaHome, "bin/java"), args, { JAVA_TOOL_OPTIONS: appEnv["JAVA_TOOL_OPTIONS"] ?? "" }), "200 through gearbox");
      assert.match(await client(path.join(javaHome, "bin/java"), args, {}), /^FAILED[\s\S]*PKIX path building failed/);
    });
  });

  void describe("Python (SSL_CERT_FILE, REQUESTS_CA_BUNDLE)", { skip: python ? false : "no python3 on this machine" }, () => {
    // getaddrinfo pointed at 127.0.0.1 for the provider host only; the certificate checks are Python's own.
    const resolve = `import socket\n_g = socket.getaddrinfo\nsocket.getaddrinfo = lambda h, *a, **k: _g("127.0.0.1" if h == "${HOST}" else h, *a, **k)\n`;
    const url = (): string => `https://${HOST}:${port}/v1/models`;

    void it("urllib (the ssl module's default context) verifies with SSL_CERT_FILE, and refuses without", async () => {
      const code = `${resolve}import urllib.request\nprint(urllib.request.urlopen("${url()}").read().decode())`;
      assert.equal(await client(python ?? "", ["-c", code], { SSL_CERT_FILE: appEnv["SSL_CERT_FILE"] ?? "" }), "through gearbox");
      assert.match(await client(python ?? "", ["-c", code], {}), /^FAILED[\s\S]*CERTIFICATE_VERIFY_FAILED/);
    });

    void it("requests verifies with REQUESTS_CA_BUNDLE, and refuses without", { skip: pythonRequests ? false : "python3 has no requests" }, async () => {
      const code = `${resolve}import requests\nprint(requests.get("${url()}").text)`;
      assert.equal(await client(python ?? "", ["-c", code], { REQUESTS_CA_BUNDLE: appEnv["REQUESTS_CA_BUNDLE"] ?? "" }), "through gearbox");
      assert.match(await client(python ?? "", ["-c", code], {}), /^FAILED[\s\S]*CERTIFICATE_VERIFY_FAILED/);
    });
  });
});
