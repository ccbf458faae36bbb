/**
 * The one suite every `AuditLog` passes (run by `memory-audit-log.test.ts` and
 * `redis-audit-log.test.ts`). `open` gives a fresh, empty log. No case is skipped.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { AuditEntry } from "../governance/model.ts";
import type { AuditLog } from "./audit-log.ts";

export interface OpenedLog {
  log: AuditLog;
  close: () => Promise<void>;
}

const entry = (n: number): AuditEntry => ({
  at: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
  actor: "key_1 (gbx_admin_Ab)",
  action: "keys.create",
  target: `key_${n}`,
  from: "10.0.0.1",
  result: "ok",
});

export function auditLogCases(name: string, open: () => Promise<OpenedLog>): void {
  const withLog = (title: string, body: (log: AuditLog) => Promise<void>): void => {
    test(title, async () => {
      const opened = await open();
      try {
        await body(opened.log);
      } finally {
        await opened.close();
      }
    });
  };

  describe(`AuditLog: ${name}`, () => {
    withLog("an empty log lists nothing", async (log) => {
      assert.deepEqual(await log.list(), []);
    });

    withLog("entries come back whole, newest first, with distinct ids", async (log) => {
      const withDetails: AuditEntry = { ...entry(2), result: "insufficient_permissions", details: { role: "call", tenant: null, nested: { n: 1 } } };
      const ids = [await log.append(entry(1)), await log.append(withDetails)];
      assert.notEqual(ids[0], ids[1]);
      const listed = await log.list();
      assert.deepEqual(listed, [
        { ...withDetails, id: ids[1] },
        { ...entry(1), id: ids[0] },
      ]);
    });

    withLog("pages: limit, then before the last id seen, until the start", async (log) => {
      for (let n = 1; n <= 5; n++) await log.append(entry(n));
      const first = await log.list({ limit: 2 });
      assert.deepEqual(
        first.map((e) => e.target),
        ["key_5", "key_4"],
      );
      const second = await log.list({ limit: 2, before: first.at(-1)?.id ?? "" });
      assert.deepEqual(
        second.map((e) => e.target),
        ["key_3", "key_2"],
      );
      const third = await log.list({ limit: 2, before: second.at(-1)?.id ?? "" });
      assert.deepEqual(
        third.map((e) => e.target),
        ["key_1"],
      );
      assert.deepEqual(await log.list({ before: third.at(-1)?.id ?? "" }), []);
    });

    withLog("limits are held within 1..1000", async (log) => {
      for (let n = 1; n <= 3; n++) await log.append(entry(n));
      assert.equal((await log.list({ limit: 0 })).length, 1);
      assert.equal((await log.list({ limit: 5000 })).length, 3);
    });

    withLog("append-only: the log offers no way to change or remove an entry, and reading changes nothing", async (log) => {
      const methods = new Set<string>();
      for (
        let proto: object | null = Object.getPrototypeOf(log) as object | null;
        proto && proto !== Object.prototype;
        proto = Object.getPrototypeOf(proto) as object | null
      ) {
        for (const m of Object.getOwnPropertyNames(proto)) if (m !== "constructor") methods.add(m);
      }
      assert.deepEqual([...methods].sort(), ["append", "list"]);
      await log.append(entry(1));
      const before = await log.list();
      await log.list({ limit: 1 });
      assert.deepEqual(await log.list(), before);
    });
  });
}
