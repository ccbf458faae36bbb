import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { loadConfig, parseConfigText, resolveConfig } from "./load.ts";

const BRIEF_ROUTE = `
route:
  rules:
    - when:
        intent: [summarize, intent_classify, extract_entity]
        estimated_complexity: low
      target: edge
    - when:
        intent: [code_gen, multi_hop_reasoning, math]
      target: cloud
  fallback:
    enable: true
    confidence_threshold: 0.6
    upgrade_target: cloud
`;

function errorsOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  const raw = parseConfigText(text, "g.yaml");
  if (!raw.ok) return raw.errors;
  const resolved = resolveConfig(raw.value, env, "g.yaml");
  return resolved.ok ? [] : resolved.errors;
}

test("the brief's route block loads as is", () => {
  const raw = parseConfigText(BRIEF_ROUTE, "brief.yaml");
  assert.ok(raw.ok, !raw.ok ? raw.errors.join("\n") : "");
  assert.equal(raw.value.route.rules.length, 2);
  assert.deepEqual(raw.value.route.rules[0]?.when.intent, ["summarize", "intent_classify", "extract_entity"]);
  assert.equal(raw.value.route.fallback.confidence_threshold, 0.6);
});

test("no file: embedded defaults with an OpenAI provider from the SDK's env variables", () => {
  const cwd = process.cwd();
  process.chdir(mkdtempSync(path.join(tmpdir(), "gearbox-")));
  try {
    const loaded = loadConfig({ env: { OPENAI_API_KEY: "sk-x", OPENAI_BASE_URL: "http://127.0.0.1:1/v1" } });
    assert.ok(loaded.ok);
    assert.equal(loaded.value.source, null);
    assert.equal(loaded.value.listen.extproc_port, 50051);
    assert.equal(loaded.value.listen.http_port, 8080);
    const [openai] = loaded.value.providers;
    assert.equal(openai?.name, "openai");
    assert.equal(openai?.apiKey, "sk-x");
    assert.equal(openai?.baseUrl.href, "http://127.0.0.1:1/v1");
    assert.equal(openai?.isDefault, true);
  } finally {
    process.chdir(cwd);
  }
});

test("errors name the bad field", () => {
  const cases: [string, RegExp][] = [
    ["providers:\n  - name: openai\n    kind: openai\n    base_url: not a url\n", /providers\[0\]\.base_url/],
    ["providers:\n  - name: x\n    kind: bedrock\n    base_url: https://a/v1\n", /providers\[0\]\.kind/],
    ["providers:\n  - name: x\n    kind: openai\n    base_url: https://a/v1\n    api_kee_env: K\n", /providers\[0\].*api_kee_env/],
    ["route:\n  rules:\n    - when: { estimated_complexity: tiny }\n      target: edge\n", /route\.rules\[0\]\.when\.estimated_complexity/],
    ["route:\n  fallback:\n    confidence_threshold: 1.5\n", /route\.fallback\.confidence_threshold/],
    ["listen:\n  http_port: 70000\n", /listen\.http_port/],
    ["limitz: {}\n", /limitz/],
    ["providers: [\n", /invalid YAML/],
    [
      "providers:\n  - { name: a, kind: openai, base_url: 'https://a/v1' }\n  - { name: a, kind: openai, base_url: 'https://b/v1' }\n",
      /providers\[1\]\.name: duplicate/,
    ],
    [
      "providers:\n  - { name: a, kind: openai, base_url: 'https://a/v1', default: true }\n  - { name: b, kind: openai, base_url: 'https://b/v1', default: true }\n",
      /at most one provider/,
    ],
    ["providers:\n  - { name: a, kind: openai, base_url: 'https://a/v1', api_key_file: /nonexistent/key }\n", /providers\[0\]\.api_key_file/],
  ];
  for (const [text, pattern] of cases) {
    const errors = errorsOf(text);
    assert.ok(
      errors.some((e) => pattern.test(e)),
      `${JSON.stringify(text)} → ${JSON.stringify(errors)}`,
    );
  }
});

test("env port overrides win, and a bad one is named", () => {
  const raw = parseConfigText("", "g.yaml");
  assert.ok(raw.ok);
  const resolved = resolveConfig(raw.value, { GEARBOX_HTTP_PORT: "9999" }, null);
  assert.ok(resolved.ok);
  assert.equal(resolved.value.listen.http_port, 9999);
  assert.deepEqual(errorsOf("", { GEARBOX_EXTPROC_PORT: "abc" }), ["GEARBOX_EXTPROC_PORT: must be a port number, got 'abc'"]);
});

test("api_key_file is read and trimmed; the first provider becomes the default", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-"));
  writeFileSync(path.join(dir, "key"), "sk-from-file\n");
  const raw = parseConfigText(
    `providers:\n  - { name: qwen, kind: openai-compatible, base_url: 'https://dashscope.aliyuncs.com/compatible-mode/v1', api_key_file: ${path.join(dir, "key")} }\n`,
    "g.yaml",
  );
  assert.ok(raw.ok);
  const resolved = resolveConfig(raw.value, {}, "g.yaml");
  assert.ok(resolved.ok);
  const [qwen] = resolved.value.providers;
  assert.equal(qwen?.apiKey, "sk-from-file");
  assert.equal(qwen?.basePath, "/compatible-mode/v1");
  assert.equal(qwen?.isDefault, true);
});

test("presets fill kind, base URL, auth, key variable, parameter rules and prices", () => {
  const raw = parseConfigText("providers:\n  - { name: ds, preset: deepseek }\n  - { name: claude, preset: anthropic }\n", "g.yaml");
  assert.ok(raw.ok);
  const resolved = resolveConfig(raw.value, { DEEPSEEK_API_KEY: "sk-ds", ANTHROPIC_API_KEY: "sk-ant" }, "g.yaml");
  assert.ok(resolved.ok, !resolved.ok ? resolved.errors.join("\n") : "");
  const [ds, claude] = resolved.value.providers;
  assert.equal(ds?.kind, "openai-compatible");
  assert.equal(ds?.baseUrl.href, "https://api.deepseek.com/v1");
  assert.equal(ds?.auth, "bearer");
  assert.equal(ds?.apiKey, "sk-ds");
  assert.ok(ds?.params.drop?.includes("n"));
  assert.equal(ds?.pricing.get("deepseek-chat")?.output, 1.1);
  assert.equal(claude?.kind, "anthropic");
  assert.equal(claude?.auth, "x-api-key");
  assert.equal(claude?.apiKey, "sk-ant");
});

test("`provider:` switches the default provider in one line", () => {
  const text = "provider: qwen\nproviders:\n  - { name: openai, preset: openai }\n  - { name: qwen, preset: dashscope }\n";
  const raw = parseConfigText(text, "g.yaml");
  assert.ok(raw.ok);
  const resolved = resolveConfig(raw.value, {}, "g.yaml");
  assert.ok(resolved.ok);
  assert.deepEqual(
    resolved.value.providers.filter((p) => p.isDefault).map((p) => p.name),
    ["qwen"],
  );
  assert.ok(errorsOf(text.replace("provider: qwen", "provider: nope")).some((e) => /^provider: no provider named 'nope'/.test(e)));
});

test("preset and Azure errors name the field", () => {
  assert.ok(errorsOf("providers:\n  - { name: x, preset: nosuch }\n").some((e) => /providers\[0\]\.preset/.test(e)));
  assert.ok(errorsOf("providers:\n  - { name: x, kind: openai-compatible }\n").some((e) => /providers\[0\]\.base_url: required/.test(e)));
  assert.ok(
    errorsOf("providers:\n  - { name: az, kind: azure-openai, base_url: 'https://r.openai.azure.com/openai' }\n").some((e) =>
      /providers\[0\]\.api_version/.test(e),
    ),
  );
});

test("shared_state: safe defaults when absent; a bad value or an unknown key names the field", () => {
  const absent = parseConfigText("", "gearbox.yaml");
  assert.ok(absent.ok);
  assert.deepEqual(absent.value.shared_state, { refresh_ms: 5_000, read_timeout_ms: 100, max_stale_ms: 600_000, probe_interval_ms: 1_000 });
  const bad = parseConfigText("shared_state: { read_timeout_ms: 0, max_stale: 5 }\n", "gearbox.yaml");
  assert.ok(!bad.ok);
  assert.ok(
    bad.errors.some((e) => e.startsWith("gearbox.yaml: shared_state.read_timeout_ms:")),
    bad.errors.join("\n"),
  );
  assert.ok(
    bad.errors.some((e) => e.includes("shared_state") && e.includes("max_stale")),
    bad.errors.join("\n"),
  );
});

test("organization and project are OpenAI's headers: refused on another kind, naming the field", () => {
  assert.deepEqual(errorsOf("providers:\n  - { name: a, kind: anthropic, base_url: 'https://api.anthropic.com/v1', organization: org-1 }\n"), [
    "providers[0].organization: only for kind openai (OpenAI's own header), not anthropic",
  ]);
  assert.deepEqual(errorsOf("providers:\n  - { name: o, kind: openai, base_url: 'https://api.openai.com/v1', organization: org-1, project: proj_1 }\n"), []);
});
