/**
 * Gearbox API keys: `gbx_admin_…` (manage tenants, keys and limits) and `gbx_call_…` (model calls
 * only), 32 random bytes each. A key is shown once, when it is made; only its SHA-256 and a short
 * visible prefix are stored. Keys are 256-bit random, so an unsalted fast hash is enough: there is
 * nothing to brute-force. `checkSecrets` is the start-up guard against placeholder secrets.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { fail, ok, type Result } from "../../common/result.ts";
import type { ApiKeyRecord, KeyRole, Limits } from "./model.ts";

/** Characters of a key kept visible (`gbx_call_Abc`, `gbx_admin_Ab`): the type and a few random characters. */
export const PREFIX_LENGTH = 12;

const KEY_FORMAT = /^gbx_(admin|call)_[A-Za-z0-9_-]{43}$/;

/** The environment variable holding the bootstrap admin key. */
export const ADMIN_KEY_ENV = "GEARBOX_ADMIN_KEY";

export interface NewKey {
  role: KeyRole;
  tenant?: string;
  name: string;
  limits?: Limits;
  /** Who asked for it (an admin key's id). */
  createdBy: string;
}

/** SHA-256 (hex) of a key: what the stores hold and look keys up by. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** Whether `key` has the shape of a Gearbox key (it may still be unknown or revoked). */
export function isGearboxKey(key: string): boolean {
  return KEY_FORMAT.test(key);
}

/** A fresh key and the record to store. The key itself exists only in the return value. */
export function generateKey(spec: NewKey, now: Date = new Date()): { key: string; record: ApiKeyRecord } {
  const key = `gbx_${spec.role}_${randomBytes(32).toString("base64url")}`;
  const record: ApiKeyRecord = {
    id: `key_${randomBytes(8).toString("hex")}`,
    role: spec.role,
    name: spec.name,
    prefix: key.slice(0, PREFIX_LENGTH),
    hash: hashKey(key),
    created_at: now.toISOString(),
    created_by: spec.createdBy,
  };
  if (spec.tenant !== undefined) record.tenant = spec.tenant;
  if (spec.limits !== undefined) record.limits = spec.limits;
  return { key, record };
}

/**
 * Whether `key` is the one `record` was made for, comparing the SHA-256 digests in constant time
 * (both are 32 bytes whatever was presented, so neither content nor length leaks through timing).
 */
export function verifyKey(key: string, record: Pick<ApiKeyRecord, "hash">): boolean {
  const expected = Buffer.from(record.hash, "hex");
  const presented = createHash("sha256").update(key, "utf8").digest();
  return expected.length === presented.length && timingSafeEqual(presented, expected);
}

/**
 * The bootstrap admin key (`GEARBOX_ADMIN_KEY`) as a record: a global admin key that lives in the
 * environment, not in a store, so it cannot be revoked over the API (rotate the variable instead).
 * Its prefix names the variable: an operator-chosen secret has no random part safe to show.
 */
export function bootstrapKeyRecord(secret: string): ApiKeyRecord {
  return {
    id: "key_bootstrap",
    role: "admin",
    name: `bootstrap (${ADMIN_KEY_ENV})`,
    prefix: `env:${ADMIN_KEY_ENV}`,
    hash: hashKey(secret),
    created_at: new Date(0).toISOString(),
    created_by: "environment",
  };
}

/** Words placeholder secrets are made of; a secret that is mostly these is no secret. */
const PLACEHOLDER_WORDS = [
  "placeholder",
  "replaceme",
  "changeme",
  "password",
  "insecure",
  "example",
  "gearbox",
  "default",
  "letmein",
  "testing",
  "secret",
  "passwd",
  "sample",
  "apikey",
  "qwerty",
  "please",
  "admin",
  "dummy",
  "token",
  "super",
  "fixme",
  "test",
  "demo",
  "todo",
  "your",
  "here",
  "key",
  "gbx",
  "my",
];
const WORDS = new RegExp(PLACEHOLDER_WORDS.join("|"), "g");
/** Template markers: `sk-xxxxxxxx`, `<your-key>`, `${SECRET}`, `{{ secret }}`, `sk-…`. */
const TEMPLATE = /x{6,}|\*{3,}|\.{3,}|…|<[^>]*>|\$\{|\{\{/i;
const MIN_LENGTH = 32;

/** Why `secret` looks like a placeholder or default rather than a random secret, or undefined if it does not. */
export function placeholderReason(secret: string): string | undefined {
  if (secret.length < MIN_LENGTH) return `shorter than ${MIN_LENGTH} characters`;
  if (new Set(secret).size < 8) return "too few distinct characters (a repeated character or pattern)";
  if (TEMPLATE.test(secret)) return "a template (xxxx, <…>, ${…}) rather than a secret";
  const rest = secret
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "")
    .replace(WORDS, "");
  if (rest.length < 16) return "made of common placeholder words (changeme, secret, password, admin, gearbox, test, example…)";
  return undefined;
}

export function isPlaceholderSecret(secret: string): boolean {
  return placeholderReason(secret) !== undefined;
}

/**
 * The start-up guard: the bootstrap admin key, when set, must be a real secret. The error names
 * the variable and why, never the value; the caller exits 1 with it.
 */
export function checkSecrets(env: NodeJS.ProcessEnv): Result<void> {
  const secret = env[ADMIN_KEY_ENV];
  if (secret === undefined) return ok(undefined);
  const reason = placeholderReason(secret);
  if (reason === undefined) return ok(undefined);
  return fail(
    `${ADMIN_KEY_ENV}: refusing to start with a placeholder or default secret (${reason}); ` +
      `set it to a random value of at least ${MIN_LENGTH} characters, e.g. \`openssl rand -base64 32\``,
  );
}
