import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { corpus } from "../../bench/boundary/corpus.ts";
import { bankCardValid, detect, EXPRESSIONS, expressionMatches, ibanValid, residentIdValid, type CustomRules } from "./detect.ts";
import { Masker, scanBody } from "./mask.ts";
import { boundaryPolicy, dataBoundarySchema, type BoundaryPolicy } from "./policy.ts";
import { StreamRestorer } from "./stream-restore.ts";
import { screen } from "./stage.ts";

const NONE: CustomRules = { keywords: [], patterns: [], markers: [] };
const found = (text: string, rules = NONE) => detect(text, rules).map((d) => `${d.category}:${text.slice(d.start, d.end)}`);

describe("detectors", () => {
  it("find structured values and validate them", () => {
    assert.deepEqual(found("write to li.wei@corp.example.cn today"), ["email:li.wei@corp.example.cn"]);
    assert.deepEqual(found("手机13812345678，或 +86 139 1234 5678"), ["phone:13812345678", "phone:+86 139 1234 5678"]);
    assert.deepEqual(found("身份证 11010519491231002X"), ["national_id:11010519491231002X"]);
    assert.deepEqual(found("SSN 123-45-6789"), ["national_id:123-45-6789"]);
    assert.deepEqual(found("card 4111-1111-1111-1111 ok"), ["bank_card:4111-1111-1111-1111"]);
    assert.deepEqual(found("IBAN GB82 WEST 1234 5698 7654 32."), ["iban:GB82 WEST 1234 5698 7654 32"]);
    assert.deepEqual(found("from 10.0.0.7 and fe80::1ff:fe23:4567:890a"), ["ip:10.0.0.7", "ip:fe80::1ff:fe23:4567:890a"]);
    assert.deepEqual(found("key AKIAIOSFODNN7EXAMPLE"), ["secret:AKIAIOSFODNN7EXAMPLE"]);
  });

  it("leave hard negatives alone: checksums fail, versions, dates, hashes, order numbers", () => {
    assert.equal(residentIdValid("110105194912310021"), false);
    assert.equal(bankCardValid("4111111111111112"), false);
    assert.equal(ibanValid("GB82WEST12345698765433"), false);
    assert.deepEqual(
      found(
        "order 110105194912310021, card 4111 1111 1111 1112, v1.2.3.4, 2024-03-15 10:22:31, build 10.0.19041.1, sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, uuid 123e4567-e89b-12d3-a456-426614174000, snake_case_identifier_name_here",
      ),
      [],
    );
  });

  it("find national phone formats, American Express, more vendors' keys, and secrets by their context", () => {
    assert.deepEqual(found("Ring 020 7946 0958 or 0161 496 0000."), ["phone:020 7946 0958", "phone:0161 496 0000"]);
    assert.deepEqual(found("固话 010-12345678，深圳 0755-81234567"), ["phone:010-12345678", "phone:0755-81234567"]);
    assert.deepEqual(found("Amex 3782 822463 10005"), ["bank_card:3782 822463 10005"]);
    assert.deepEqual(found("ssn: 219 09 9999, social security number 219099999"), ["national_id:219 09 9999", "national_id:219099999"]);
    assert.deepEqual(found("token npm_abcdefghijklmnopqrstuvwxyz0123456789 and hf_abcdefghijklmnopqrstuvwxyzABCDEF"), [
      "secret:npm_abcdefghijklmnopqrstuvwxyz0123456789",
      "secret:hf_abcdefghijklmnopqrstuvwxyzABCDEF",
    ]);
    assert.deepEqual(found("password=Sup3rS3cret!2024 then 密码：abc12345"), ["secret:Sup3rS3cret!2024", "secret:abc12345"]);
    // A word that only contains "here" or "your" is no placeholder.
    assert.deepEqual(found("password: Somewhere42!"), ["secret:Somewhere42!"]);
    assert.deepEqual(found(`{"client_secret": "q8v!Zx2#kLp0", "secret_key": 'django-insecure-8h2k!x9z'}`), [
      "secret:q8v!Zx2#kLp0",
      "secret:django-insecure-8h2k!x9z",
    ]);
    assert.deepEqual(found("1-800-555-0199, (+44) 20 7946 0958, phone: 0049 30 901820"), [
      "phone:1-800-555-0199",
      "phone:+44) 20 7946 0958",
      "phone:0049 30 901820",
    ]);
    assert.deepEqual(found("身份证 110105 19491231 002X"), ["national_id:110105 19491231 002X"]);
    assert.deepEqual(found("post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"), [
      "secret:hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    ]);
    assert.deepEqual(found("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"), ["secret:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]);
    // The password of a URL is a secret, not the start of an e-mail address.
    assert.deepEqual(found("DATABASE_URL=postgres://admin:hunter2pass@db.internal:5432/prod"), ["secret:hunter2pass"]);
  });

  it("leave names of secrets, placeholders, code and look-alike numbers alone", () => {
    assert.deepEqual(
      found(
        "interface Config { token: string; apiKey: string } const apiKey = process.env.OPENAI_API_KEY; password: ${DB_PASSWORD}; " +
          "Set password=your-password-here. max_tokens: 1024, token=abc, secret: the plan, password: <redacted>, pwd: /home/user/project, " +
          "token: 1500 per minute, git clone https://github.com/org/repo.git, Version 010-20240115, code 0x80070005 at 020 1234, 2024-01-15",
      ),
      [],
    );
  });

  it("find, from candidate positions only, exactly what one combined expression over the whole text finds", () => {
    const combined = new RegExp(EXPRESSIONS.map(([, s]) => `(${s})`).join("|"), "g");
    const reference = (text: string) =>
      [...text.matchAll(combined)].map((m) => {
        const i = m.findIndex((g, j) => j > 0 && g !== undefined);
        return [EXPRESSIONS[i - 1]![0], m.index, m[0]];
      });
    const texts = corpus(3000, 41).map((s) => s.text);
    for (let i = 0; i + 5 < texts.length; i += 5) texts.push(texts.slice(i, i + 5).join(" "));
    texts.push(
      "key=sk_live_abcdefghijKLMNOP1234, rk_test_ABCDEFGHIJKLMNOPQRST, glpat-abcdefghij1234567890, mysk-proj-abcdefghijklmnopqrstuvwxyz0123",
      "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U, xoxb-abcdefghijk, prefixAKIAIOSFODNN7EXAMPLE",
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- then ghp_" + "Ab1".repeat(12),
      "call +1 (415) 555-1234 or (415) 555-1234 or 0086 138 1234 5678 or ::1 or fe80::1 or 2001:db8::ff00:42:8329 at 10:30:00",
      "DE89370400440532013000 GB82 WEST 1234 5698 7654 32 xDE89370400440532013000 4111 1111 1111 1111 123-45-6789",
    );
    let matched = 0;
    for (const t of texts) {
      const want = reference(t);
      matched += want.length;
      assert.deepEqual(expressionMatches(t), want, t);
    }
    assert.ok(matched > 3000, `only ${matched} matches: the texts do not exercise the expressions`);
  });

  it("find tenant keywords, patterns and markers", () => {
    const rules = { keywords: ["Project Falcon"], patterns: [/PRJ-\d{4}/g], markers: ["机密"] };
    assert.deepEqual(found("【机密】project falcon 与 PRJ-2231", rules), ["marker:机密", "keyword:project falcon", "keyword:PRJ-2231"]);
  });
});

const policyOf = (raw: unknown, tenant = "default", endpoint = "chat_completions"): BoundaryPolicy => {
  const p = boundaryPolicy(dataBoundarySchema.parse(raw), tenant, endpoint);
  assert.ok(p);
  return p;
};

describe("policy", () => {
  it("resolves groups, categories, tenants and endpoints, the most specific winning", () => {
    const raw = { enable: true, pii: "redact", email: "allow", tenants: { acme: { pii: "edge_only" } }, endpoints: { embeddings: { pii: "block" } } };
    assert.equal(policyOf(raw).actions.email, "allow");
    assert.equal(policyOf(raw).actions.phone, "redact");
    assert.equal(policyOf(raw).actions.secret, "block");
    assert.equal(policyOf(raw, "acme").actions.phone, "edge_only");
    assert.equal(policyOf(raw, "acme", "embeddings").actions.phone, "block");
    assert.equal(boundaryPolicy(dataBoundarySchema.parse({}), "x", "y"), undefined);
  });

  it("rejects a bad action or pattern with the field named", () => {
    assert.throws(() => dataBoundarySchema.parse({ pii: "mask" }), /pii/);
    assert.throws(() => dataBoundarySchema.parse({ patterns: ["(unclosed"] }), /regular expression/);
  });
});

describe("masking and restoration", () => {
  const redactAll = policyOf({ enable: true, secrets: "redact", pii: "redact", confidential: "redact" });
  const body = {
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: "You help ops. Contact ops@example.com." },
      { role: "user", content: "Mail ops@example.com and bob@example.org about 13812345678" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "send", arguments: '{"to":"bob@example.org"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "sent to bob@example.org" },
    ],
  };

  it("masks every string with stable placeholders and restores them exactly", () => {
    const scan = scanBody(body, redactAll, JSON.stringify(body));
    assert.equal(scan.kind, "redacted");
    if (scan.kind !== "redacted") return;
    const text = JSON.stringify(scan.body);
    assert.doesNotMatch(text, /example\.com|example\.org|13812345678/);
    const n = scan.masker.nonce;
    assert.match(text, new RegExp(`Contact <EMAIL_1_${n}>\\.`));
    assert.match(text, new RegExp(`Mail <EMAIL_1_${n}> and <EMAIL_2_${n}> about <PHONE_1_${n}>`));
    assert.deepEqual(scan.counts, { email: 5, phone: 1 });
    assert.deepEqual(JSON.parse(scan.masker.restoreBody(Buffer.from(text)).toString()), body);
  });

  it("is collision-safe: text that looks like a placeholder is neither reused nor restored", () => {
    const forged = "<EMAIL_1_abcdef> write to a@b.io";
    const m = new Masker(forged, "abcdef");
    assert.notEqual(m.nonce, "abcdef");
    const p = m.placeholder("email", "a@b.io");
    assert.equal(m.restore(`${forged.replace("a@b.io", p)}`), forged);
    assert.equal(m.restore(`<EMAIL_9_${m.nonce}> stays`), `<EMAIL_9_${m.nonce}> stays`);
  });

  it("restores a placeholder split across stream events, in content and tool arguments", () => {
    const m = new Masker("");
    const p = m.placeholder("email", "ann@corp.io");
    const q = m.placeholder("phone", "13900001111");
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const full = `Reach ${p} or ${q}.`;
    for (let cut = 1; cut < full.length; cut++) {
      const events = [
        chunk({ role: "assistant", content: "" }),
        chunk({ content: full.slice(0, cut) }),
        chunk({ content: full.slice(cut) }),
        chunk({}, "stop"),
        "data: [DONE]\n\n",
      ];
      const wire = Buffer.from(events.join(""));
      // Also split the bytes mid-event.
      const r = new StreamRestorer(m);
      const split = Math.min(wire.length - 1, 40 + cut);
      const out = Buffer.concat([r.push(wire.subarray(0, split), false), r.push(wire.subarray(split), true)]).toString();
      const text = out
        .split("\n\n")
        .filter((e) => e.startsWith("data: {"))
        .map((e) => (JSON.parse(e.slice(6)) as { choices: [{ delta: { content?: string } }] }).choices[0].delta.content ?? "")
        .join("");
      assert.equal(text, "Reach ann@corp.io or 13900001111.", `cut at ${cut}`);
      assert.ok(out.endsWith("data: [DONE]\n\n"));
    }
    const args = [`{"to":"${p.slice(0, 5)}`, `${p.slice(5)}"}`];
    const r = new StreamRestorer(m);
    const tool = (a: string, first: boolean) =>
      chunk({ tool_calls: [{ index: 0, ...(first && { id: "call_1", type: "function" }), function: { ...(first && { name: "send" }), arguments: a } }] });
    const out = r.push(Buffer.from(tool(args[0]!, true) + tool(args[1]!, false) + chunk({}, "tool_calls")), true).toString();
    const parts = out
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)) as { choices: [{ delta: { tool_calls?: [{ id?: string; function: { name?: string; arguments: string } }] } }] });
    assert.equal(parts.map((e) => e.choices[0].delta.tool_calls?.[0]?.function.arguments ?? "").join(""), '{"to":"ann@corp.io"}');
    assert.equal(parts.filter((e) => e.choices[0].delta.tool_calls?.[0]?.function.name === "send").length, 1);
  });
});

describe("screen", () => {
  const config = dataBoundarySchema.parse({ enable: true, keywords: ["Falcon"] });
  it("blocks secrets with a code naming the category and never the value", () => {
    const s = screen(config, "t", "chat_completions", { messages: [{ role: "user", content: "use sk-proj-Zx9yW8vU7tS6rQ5pO4nM3lK2" }] }, undefined);
    assert.equal(s.kind, "refused");
    if (s.kind !== "refused") return;
    assert.equal(s.error.status, 403);
    assert.equal(s.error.code, "data_boundary_secret");
    assert.doesNotMatch(s.error.message, /Zx9y/);
  });
  it("keeps confidential requests on the edge, unmasked", () => {
    const s = screen(config, "t", "chat_completions", { messages: [{ role: "user", content: "Falcon launch plan for a@b.io" }] }, undefined);
    assert.equal(s.kind, "screened");
    if (s.kind !== "screened") return;
    assert.equal(s.state.edgeOnly, "keyword");
    assert.equal(s.body, undefined);
  });
  it("fails closed when a detector throws: edge only, nothing masked or sent", () => {
    const broken: BoundaryPolicy = {
      ...policyOf({ enable: true }),
      rules: {
        keywords: [],
        markers: [],
        get patterns(): RegExp[] {
          throw new Error("boom");
        },
      },
    };
    const scan = scanBody({ messages: [{ role: "user", content: "hi" }] }, broken, "");
    assert.deepEqual(scan, { kind: "edge_only", category: "detector_error", counts: {} });
  });
});
