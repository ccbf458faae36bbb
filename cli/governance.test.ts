import assert from "node:assert/strict";
import { test } from "node:test";
import { configSchema } from "../extproc/config/schema.ts";
import { authLine } from "./governance.ts";

const tenant = { id: "shop", limits: { requests_per_second: 10 } };

test("auth line: tenants in the config and auth.required: false says why keys are optional (not 'no tenants')", () => {
  const line = authLine(configSchema.parse({ tenants: [tenant], auth: { required: false } }), false);
  assert.equal(line, "  auth            keys optional (auth.required: false): callers without a key are tenant 'default'; 1 tenant(s) in the config");
});

test("auth line: embedded defaults (no tenants, no admin key) say keys are optional because no tenants are configured", () => {
  const line = authLine(configSchema.parse({}), false);
  assert.equal(line, "  auth            keys optional (no tenants configured): callers without a key are tenant 'default'; 0 tenant(s) in the config");
});

test("auth line: required keys", () => {
  assert.equal(
    authLine(configSchema.parse({ tenants: [tenant] }), true),
    "  auth            call key or bound workload identity required; 1 tenant(s) in the config",
  );
});
