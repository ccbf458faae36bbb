import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { adsService } from "../common/control-plane/protos.ts";
import { startOpenAIUpstream } from "../test/emulators/openai-upstream.ts";

const BIN = fileURLToPath(new URL("../bin/gearbox.mjs", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `gearbox …` in `cwd`; `onReady` is called once stdout matches `readyLine` (the front door line by default). */
function gearbox(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  onReady?: (stdout: string, stop: () => void) => void,
  readyLine = /front door\s+http:\/\/\S+:\d+/,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH, ...env } });
    let stdout = "";
    let stderr = "";
    let ready = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (!ready && onReady && readyLine.test(stdout)) {
        ready = true;
        onReady(stdout, () => child.kill("SIGTERM"));
      }
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const freshDir = () => mkdtempSync(path.join(tmpdir(), "gearbox-cli-"));

test("gearbox serve: starts on embedded defaults, says what runs and what is not configured, drains on SIGTERM", async () => {
  let health = 0;
  const run = await gearbox(
    ["serve"],
    freshDir(),
    { GEARBOX_EXTPROC_PORT: "0", GEARBOX_HTTP_PORT: "0", GEARBOX_XDS_PORT: "0", GEARBOX_METRICS_PORT: "0" },
    (stdout, stop) => {
      const port = /front door\s+http:\/\/\S+:(\d+)/.exec(stdout)?.[1];
      fetch(`http://127.0.0.1:${port}/healthz`)
        .then((res) => (health = res.status))
        .finally(stop)
        .catch(() => undefined);
    },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(health, 200);
  assert.match(run.stdout, /config \(none found: embedded defaults\)/);
  assert.match(run.stdout, /ext_proc gRPC\s+0\.0\.0\.0:\d+/);
  assert.match(run.stdout, /control plane\s+0\.0\.0\.0:\d+/);
  assert.match(run.stdout, /routing\s+policy and edge agents from the control plane at 127\.0\.0\.1:\d+/);
  assert.match(run.stdout, /provider\s+openai .*NO KEY \(env OPENAI_API_KEY \(unset\)\): requests go without credentials/);
  assert.match(run.stdout, /SIGTERM received, draining/);
});

test("gearbox serve: a bad config exits 1 and names the field", async () => {
  const dir = freshDir();
  writeFileSync(path.join(dir, "gearbox.yaml"), "providers:\n  - name: openai\n    kind: openai\n    base_url: nope\n");
  const run = await gearbox(["serve"], dir, {});
  assertOneLineFailure(run, "gearbox serve: gearbox.yaml: providers[0].base_url: Invalid URL");
});

test("gearbox xds: the control plane alone answers ADS and stops on SIGTERM", async () => {
  let version = "";
  const run = await gearbox(
    ["xds"],
    freshDir(),
    { GEARBOX_XDS_PORT: "0", GEARBOX_METRICS_PORT: "0" },
    (stdout, stop) => {
      const port = /control plane\s+\S+:(\d+)/.exec(stdout)?.[1];
      const Ads = adsService();
      const client = new Ads(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const stream = (client.StreamAggregatedResources as () => grpc.ClientDuplexStream<unknown, { version_info: string }>).call(client);
      stream.on("data", (r: { version_info: string }) => {
        version = r.version_info;
        stream.cancel();
        client.close();
        stop();
      });
      stream.on("error", () => undefined);
      stream.write({ node: { id: "cli-test", cluster: "gearbox-extproc" }, type_url: "type.googleapis.com/envoy.config.cluster.v3.Cluster" });
    },
    /control plane\s+\S+:(\d+)/,
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /gearbox xds: config/);
  assert.ok(version !== "", "a snapshot version came back");
  assert.doesNotMatch(run.stdout, /front door/);
});

test("gearbox serve: a placeholder admin secret stops the start (exit 1), naming the variable, never the value", async () => {
  const run = await gearbox(["serve"], freshDir(), {
    GEARBOX_ADMIN_KEY: "changeme",
    GEARBOX_EXTPROC_PORT: "0",
    GEARBOX_HTTP_PORT: "0",
    GEARBOX_XDS_PORT: "0",
    GEARBOX_METRICS_PORT: "0",
  });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /GEARBOX_ADMIN_KEY/);
  assert.doesNotMatch(run.stderr + run.stdout, /changeme/);
});

test("gearbox serve: with a strong admin secret the admin API runs, and refuses callers without a key", async () => {
  let status = 0;
  const secret = "Zm9vYmFyLXN0cm9uZy1zZWNyZXQtZm9yLWdlYXJib3gtdGVzdHMtMjAyNg";
  const run = await gearbox(
    ["serve"],
    freshDir(),
    { GEARBOX_ADMIN_KEY: secret, GEARBOX_EXTPROC_PORT: "0", GEARBOX_HTTP_PORT: "0", GEARBOX_XDS_PORT: "0", GEARBOX_METRICS_PORT: "0", GEARBOX_ADMIN_PORT: "0" },
    (stdout, stop) => {
      const port = /admin API\s+http:\/\/\S+:(\d+)/.exec(stdout)?.[1];
      fetch(`http://127.0.0.1:${port}/v1/tenants`)
        .then((res) => (status = res.status))
        .finally(stop)
        .catch(() => undefined);
    },
    /admin API\s+http:\/\/\S+:\d+/,
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(status, 401);
  assert.match(run.stdout, /auth\s+call key or bound workload identity required/);
});

test("gearbox: unknown command exits 2 with usage", async () => {
  const run = await gearbox(["frobnicate"], freshDir(), {});
  assert.equal(run.code, 2);
  assert.match(run.stderr, /unknown command 'frobnicate'/);
  assert.match(run.stderr, /usage: gearbox/);
});

const ANY_PORTS = { GEARBOX_EXTPROC_PORT: "0", GEARBOX_HTTP_PORT: "0", GEARBOX_XDS_PORT: "0", GEARBOX_METRICS_PORT: "0" };
const STRONG_SECRET = "Zm9vYmFyLXN0cm9uZy1zZWNyZXQtZm9yLWdlYXJib3gtdGVzdHMtMjAyNg";

/** A port some other process listens on (all interfaces, as Gearbox's default host). */
async function takenPort(): Promise<{ port: number; close: () => void }> {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, "0.0.0.0", r));
  return { port: (taken.address() as AddressInfo).port, close: () => taken.close() };
}

/** One line on stderr, exit 1, no stack trace, nothing on stdout saying it started. */
function assertOneLineFailure(run: Run, line: string): void {
  assert.equal(run.code, 1, run.stderr);
  assert.equal(run.stderr, `${line}\n`);
  assert.doesNotMatch(run.stdout, /front door|control plane\s/);
}

for (const [mode, variable, setting] of [
  ["serve", "GEARBOX_HTTP_PORT", "listen.http_port"],
  ["serve", "GEARBOX_EXTPROC_PORT", "listen.extproc_port"],
  ["serve", "GEARBOX_XDS_PORT", "listen.xds_port"],
  ["serve", "GEARBOX_METRICS_PORT", "listen.metrics_port"],
  ["extproc", "GEARBOX_ADMIN_PORT", "listen.admin_port"],
] as const) {
  test(`gearbox ${mode} with ${setting} in use: one line naming the port and its setting, exit 1`, async () => {
    const taken = await takenPort();
    try {
      const run = await gearbox([mode], freshDir(), { ...ANY_PORTS, GEARBOX_ADMIN_KEY: STRONG_SECRET, [variable]: String(taken.port) });
      assertOneLineFailure(run, `gearbox ${mode}: port ${taken.port} is in use (${setting} / ${variable})`);
    } finally {
      taken.close();
    }
  });
}

test("gearbox serve with two settings on one port: one line naming both, exit 1", async () => {
  const run = await gearbox(["serve"], freshDir(), { ...ANY_PORTS, GEARBOX_HTTP_PORT: "47123", GEARBOX_METRICS_PORT: "47123" });
  assertOneLineFailure(run, "gearbox serve: port 47123 is set twice (listen.http_port / GEARBOX_HTTP_PORT and listen.metrics_port / GEARBOX_METRICS_PORT)");
});

test("gearbox edge-agent with its port in use: one line naming --port and GEARBOX_EDGE_PORT, exit 1", async () => {
  const taken = await takenPort();
  try {
    const run = await gearbox(["edge-agent", "--port", String(taken.port)], freshDir(), {});
    assertOneLineFailure(run, `gearbox edge-agent: port ${taken.port} is in use (--port / GEARBOX_EDGE_PORT)`);
  } finally {
    taken.close();
  }
});

test("GEARBOX_CONFIG naming a file that does not exist is an error (not the embedded defaults), exit 1", async () => {
  const dir = freshDir();
  const run = await gearbox(["serve"], dir, { ...ANY_PORTS, GEARBOX_CONFIG: path.join(dir, "nope.yaml") });
  assertOneLineFailure(run, `gearbox serve: config file ${path.join(dir, "nope.yaml")} (GEARBOX_CONFIG) does not exist`);
});

test("GEARBOX_CONFIG naming something that cannot be read as a file is an error, exit 1", async () => {
  const dir = freshDir();
  const run = await gearbox(["xds"], dir, { ...ANY_PORTS, GEARBOX_CONFIG: dir });
  assertOneLineFailure(run, `gearbox xds: config file ${dir} (GEARBOX_CONFIG) is a directory`);
});

test("a config file that is not YAML: one line with the line and column, exit 1", async () => {
  const dir = freshDir();
  writeFileSync(path.join(dir, "gearbox.yaml"), "listen: { http_port: [1\n");
  const run = await gearbox(["serve"], dir, ANY_PORTS);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /^gearbox serve: gearbox\.yaml: invalid YAML: .* at line 2, column 1\n$/);
});

test("gearbox serve with tenants and auth.required: false says keys are optional because of that setting", async () => {
  const dir = freshDir();
  writeFileSync(path.join(dir, "gearbox.yaml"), "auth: { required: false }\ntenants:\n  - { id: shop }\n");
  const run = await gearbox(["serve"], dir, ANY_PORTS, (_stdout, stop) => stop(), /auth\s+.*\n/);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /auth\s+keys optional \(auth\.required: false\): callers without a key are tenant 'default'; 1 tenant\(s\) in the config/);
  assert.doesNotMatch(run.stdout, /no tenants configured/);
});

test("SIGTERM while gearbox serve is still starting (right after its first banner line) drains once it is up: exit 0, not killed", async () => {
  const run = await gearbox(["serve"], freshDir(), ANY_PORTS, (_stdout, stop) => stop(), /gearbox serve: config/);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /SIGTERM received, draining/);
});

const VERBS = ["serve", "extproc", "xds", "edge-agent", "tenants", "keys", "limits", "report", "replay", "demo"];

test("gearbox --help, -h, help and no command print the usage and exit 0", async () => {
  for (const args of [["--help"], ["-h"], ["help"], []]) {
    const run = await gearbox(args, freshDir(), {});
    assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
    assert.match(run.stdout, /^usage: gearbox <command>/);
    for (const verb of VERBS) assert.match(run.stdout, new RegExp(`\\n  ${verb}\\s`), `${args.join(" ")} lists ${verb}`);
    assert.match(run.stdout, /GEARBOX_ADMIN_PORT/);
  }
});

test("gearbox --version prints package.json's version", async () => {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  for (const flag of ["--version", "-v", "version"]) {
    const run = await gearbox([flag], freshDir(), {});
    assert.equal(run.code, 0);
    assert.equal(run.stdout, `gearbox ${pkg.version}\n`);
  }
});

test("help <verb> and <verb> --help print the verb's own usage (a server verb starts nothing), exit 0", async () => {
  for (const verb of VERBS) {
    // `-h` for two verbs only: each spawn costs a second.
    const forms = [["help", verb], [verb, "--help"], ...(verb === "serve" || verb === "keys" ? [[verb, "-h"]] : [])];
    const [viaHelp, ...others] = await Promise.all(forms.map((args) => gearbox(args, freshDir(), {})));
    for (const run of [viaHelp, ...others]) {
      assert.equal(run?.code, 0, `${verb}: ${run?.stderr}`);
      assert.match(run?.stdout ?? "", new RegExp(`^usage: gearbox ${verb}\\b`));
    }
    for (const run of others) assert.equal(run.stdout, viaHelp?.stdout);
  }
});

test("gearbox help <unknown> exits 2; a server verb with a stray argument exits 2 with its usage", async () => {
  const unknown = await gearbox(["help", "frobnicate"], freshDir(), {});
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  const stray = await gearbox(["serve", "--port", "9"], freshDir(), ANY_PORTS);
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /^gearbox serve: unexpected argument '--port'.*\n\nusage: gearbox serve/);
  assert.doesNotMatch(stray.stdout, /front door/);
});

test("gearbox serve with both caches on (a config file): a paraphrase is answered from the semantic cache; SIGTERM stops the index worker too", async () => {
  const cloud = await startOpenAIUpstream();
  const dir = freshDir();
  writeFileSync(
    path.join(dir, "gearbox.yaml"),
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', auth: none }\ncache:\n  exact: { enable: true }\n  semantic: { enable: true, threshold: 0.8 }\n`,
  );
  const routes: string[] = [];
  try {
    const run = await gearbox(
      ["serve"],
      dir,
      { GEARBOX_EXTPROC_PORT: "0", GEARBOX_HTTP_PORT: "0", GEARBOX_XDS_PORT: "0", GEARBOX_METRICS_PORT: "0" },
      (stdout, stop) => {
        const port = /front door\s+http:\/\/\S+:(\d+)/.exec(stdout)?.[1];
        const ask = async (question: string) => {
          const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model: "gpt-4o-mini", temperature: 0, messages: [{ role: "user", content: question }] }),
          });
          await res.arrayBuffer();
          routes.push(`${res.status} ${res.headers.get("x-gearbox-route") ?? ""} ${res.headers.get("x-gearbox-cache") ?? ""}`.trim());
        };
        (async () => {
          await ask("How do I reverse a list in Python?");
          // The answer is stored after the response (fire and forget, through the index worker).
          for (let i = 0; i < 50 && !routes.at(-1)?.includes("semantic-hit"); i++) {
            await new Promise((r) => setTimeout(r, 50));
            await ask("How can I reverse a list in Python?");
          }
        })()
          .finally(stop)
          .catch(() => undefined);
      },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /semantic cache\s+in memory/);
    assert.equal(routes[0], "200 cloud");
    assert.equal(routes.at(-1), "200 cache semantic-hit", routes.join(", "));
  } finally {
    await cloud.close();
  }
});
