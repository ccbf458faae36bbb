/**
 * Images and compose, checked statically (no Docker engine on this machine, so nothing here is
 * built or run): multi-stage, non-root Dockerfiles with the right command per image, copying
 * every source file the `gearbox` command can load; a compose file whose services, ports,
 * health checks and mounted configs agree with Gearbox's contract and parse into their schemas.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import YAML from "yaml";
import { EDGE_AGENT_USAGE } from "../../edge-agent/main.ts";
import { parseConfigText, resolveConfig } from "../../extproc/config/load.ts";
import { parseBootstrap } from "../envoy/load-config.ts";
import { arrayAtPath } from "../envoy/plain.ts";
import { toPlainObject } from "../envoy/proto-json.ts";
import { arr, obj, REPO } from "./manifests.ts";

interface Stage {
  from: string;
  instructions: { op: string; args: string }[];
}

/** Dockerfile → stages (continuation lines joined, comments dropped). */
function stages(file: string): Stage[] {
  const lines = readFileSync(path.join(REPO, file), "utf8").replace(/\\\n/g, " ").split("\n");
  const out: Stage[] = [];
  for (const line of lines.map((l) => l.trim()).filter((l) => l && !l.startsWith("#"))) {
    const [op = "", ...rest] = line.split(/\s+/);
    const args = rest.join(" ");
    if (op.toUpperCase() === "FROM") out.push({ from: args, instructions: [] });
    else out.at(-1)?.instructions.push({ op: op.toUpperCase(), args });
  }
  return out;
}

const last = (s: Stage[], op: string): string | undefined =>
  s
    .at(-1)
    ?.instructions.filter((i) => i.op === op)
    .at(-1)?.args;

/** Repository files reachable by relative imports (static and dynamic) from `entry`. */
function reachable(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const text = readFileSync(path.join(REPO, entry), "utf8");
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = path.relative(REPO, path.resolve(REPO, path.dirname(entry), m[1] ?? ""));
    if (existsSync(path.join(REPO, target))) reachable(target, seen);
  }
  return seen;
}

const IMAGES = [
  { file: "Dockerfile", user: /^65532(:65532)?$/, cmd: '["serve"]' },
  { file: "Dockerfile.edge-agent", user: /^10001(:10001)?$/, cmd: '["edge-agent"]' },
];

void describe("Dockerfiles", () => {
  for (const image of IMAGES) {
    void it(`${image.file}: multi-stage, non-root, gearbox entrypoint and the right default command`, () => {
      const s = stages(image.file);
      assert.ok(s.length >= 2, "multi-stage");
      assert.ok(
        s[0]?.instructions.some((i) => i.op === "RUN" && /npm ci --omit=dev/.test(i.args)),
        "production dependencies only, from the lockfile",
      );
      assert.ok(
        s.at(-1)?.instructions.some((i) => i.op === "COPY" && i.args.startsWith("--from=")),
        "the final stage copies from a build stage",
      );
      assert.match(last(s, "USER") ?? "root", image.user);
      assert.match(last(s, "ENTRYPOINT") ?? "", /node", "bin\/gearbox\.mjs"\]$/);
      assert.equal(last(s, "CMD"), image.cmd);
    });

    void it(`${image.file}: copies every file the gearbox command can load`, () => {
      const copied =
        stages(image.file)
          .at(-1)
          ?.instructions.filter((i) => i.op === "COPY" && !i.args.startsWith("--from"))
          .map((i) => i.args.split(/\s+/)[0] ?? "") ?? [];
      const files = [...reachable("bin/gearbox.mjs"), ...reachable("cli/gearbox.ts"), ...reachable("edge-agent/main.ts")];
      assert.ok(files.length > 50, `only ${files.length} files reachable: the import scan is broken`);
      const missing = files.filter((f) => !copied.some((c) => f === c || f.startsWith(`${c}/`)));
      assert.deepEqual([...new Set(missing)], []);
      const ignored = readFileSync(path.join(REPO, ".dockerignore"), "utf8")
        .split("\n")
        .map((l) => l.trim());
      for (const c of copied) assert.ok(!ignored.includes(c), `.dockerignore drops ${c}`);
      for (const must of [".git", "node_modules", ".env"]) assert.ok(ignored.includes(must), `.dockerignore: ${must}`);
    });
  }

  /** The deps stage's `npm ci` command and the files it copied before running it. */
  const install = (file: string): { ci: string; copied: string[] } => {
    const deps = stages(file)[0]?.instructions ?? [];
    const at = deps.findIndex((i) => i.op === "RUN" && /npm ci\b/.test(i.args));
    const copied = deps
      .slice(0, at)
      .filter((i) => i.op === "COPY")
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    return { ci: deps[at]?.args ?? "", copied };
  };

  void it("Dockerfile (ext_proc, control plane, serve) installs no inference engine: the root package alone, without the edge-agent workspace", () => {
    const { ci, copied } = install("Dockerfile");
    assert.match(ci, /npm ci --omit=dev --workspaces=false\b/);
    assert.ok(!copied.includes("edge-agent/package.json"), "the deps stage must not see the edge-agent workspace");
    assert.ok(copied.includes(".npmrc"));
    const root = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    for (const engine of ["node-llama-cpp", "onnxruntime-node", "ollama"]) assert.equal(root.dependencies[engine], undefined, `${engine} is a root dependency`);
  });

  void it("Dockerfile.edge-agent installs the edge-agent workspace (its engines) with the gateway's packages", () => {
    const { ci, copied } = install("Dockerfile.edge-agent");
    assert.doesNotMatch(ci, /--workspaces=false|--ignore-scripts/);
    assert.ok(copied.includes("edge-agent/package.json"), "npm ci needs the workspace's package.json");
    assert.ok(copied.includes(".npmrc"), ".npmrc keeps onnxruntime-node's install script from downloading");
  });
});

void describe("compose.yaml", () => {
  const compose = obj(YAML.parse(readFileSync(path.join(REPO, "compose.yaml"), "utf8")));
  const services = obj(compose["services"]);
  const service = (name: string): Record<string, unknown> => obj(services[name]);
  const mounts = (name: string): [string, string][] => arr(service(name)["volumes"]).map((v) => String(v).split(":") as [string, string]);

  void it("runs Envoy, Gearbox, Redis and an edge agent, each with a health check, started in order", () => {
    assert.deepEqual(Object.keys(services).sort(), ["edge-agent", "envoy", "gearbox", "redis"]);
    for (const [name, s] of Object.entries(services)) assert.ok(arr(obj(obj(s)["healthcheck"])["test"]).length > 0, `${name}: healthcheck`);
    assert.deepEqual(obj(service("envoy")["depends_on"]), { gearbox: { condition: "service_healthy" } });
    assert.deepEqual(obj(service("gearbox")["depends_on"]), { redis: { condition: "service_healthy" } });
    assert.deepEqual(obj(service("gearbox")["build"]), { context: ".", dockerfile: "Dockerfile" });
    assert.deepEqual(obj(service("edge-agent")["build"]), { context: ".", dockerfile: "Dockerfile.edge-agent" });
    assert.deepEqual(service("gearbox")["ports"], ["8080:8080", "9464:9464"]);
    assert.deepEqual(service("envoy")["ports"], ["10000:10000"]);
    assert.equal(obj(service("gearbox")["environment"])["REDIS_URL"], "redis://redis:6379");
  });

  void it("Envoy's config is one of envoy/, parses as a Bootstrap, and reaches Gearbox's ext_proc by a name compose gives it", () => {
    const [[source = "", target = ""] = []] = mounts("envoy");
    assert.match(source, /^\.\/envoy\/[a-z-]+\.yaml$/);
    assert.ok(arr(service("envoy")["command"]).includes(target), "envoy -c uses the mounted file");
    const result = parseBootstrap(YAML.parse(readFileSync(path.join(REPO, source), "utf8")));
    assert.ok(result.ok, result.ok ? "" : result.errors.join("\n"));
    const plain = toPlainObject(result.type, result.message);
    const listener = obj(arrayAtPath(plain, "static_resources.listeners")[0]);
    assert.equal(obj(obj(listener["address"])["socket_address"])["address"], "0.0.0.0", "reachable through the published port");
    const cluster = obj(arrayAtPath(plain, "static_resources.clusters").find((c) => obj(c)["name"] === "gearbox_extproc"));
    const address = obj(
      obj(obj(obj(arr(obj(arr(obj(cluster["load_assignment"])["endpoints"])[0])["lb_endpoints"])[0])["endpoint"])["address"])["socket_address"],
    );
    const aliases = arr(obj(obj(service("gearbox")["networks"])["default"])["aliases"]);
    assert.ok(aliases.includes(address["address"]) || address["address"] === "gearbox", `ext_proc address ${String(address["address"])}`);
    assert.equal(address["port_value"], 50051);
  });

  void it("Gearbox's config loads with Gearbox's own validation; the edge agent joins its control plane with real flags", () => {
    const [[source = "", target = ""] = []] = mounts("gearbox");
    assert.equal(obj(service("gearbox")["environment"])["GEARBOX_CONFIG"], target);
    const raw = parseConfigText(readFileSync(path.join(REPO, source), "utf8"), source);
    assert.ok(raw.ok, raw.ok ? "" : raw.errors.join("\n"));
    const config = resolveConfig(raw.value, {}, null);
    assert.ok(config.ok, config.ok ? "" : config.errors.join("\n"));
    const args = arr(service("edge-agent")["command"]).map(String);
    assert.equal(args[0], "edge-agent");
    for (const flag of args.filter((a) => a.startsWith("--"))) assert.ok(EDGE_AGENT_USAGE.includes(flag), `unknown flag ${flag}`);
    assert.equal(args[args.indexOf("--control-plane") + 1], "gearbox:18000");
    const modelMount = mounts("edge-agent").find(([, t]) => t === "/models");
    assert.ok(modelMount, "models mounted at /models");
    for (const m of config.value.edge.assignments.flatMap((a) => a.models))
      assert.ok(m.source.startsWith("/models/"), `${m.id}: ${m.source} is not under /models`);
  });
});
