import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeUnprintable, isPrintable } from "./printable.ts";

test("plain names, accents, CJK and emoji are printable; controls, separators and bidi overrides are not", () => {
  for (const ok of ["checkout", "Café – prod", "结账服务", "ops 🚀", "a\\b"]) assert.ok(isPrintable(ok), ok);
  for (const bad of ["a\rb", "a\nb", "a\u0000b", "\u001b[2J", "a\u007fb", "\u009b31m", "a\u2028b", "evil\u202egnp.exe", "x\u2066y"])
    assert.ok(!isPrintable(bad), JSON.stringify(bad));
});

test("escaping shows every unprintable character and leaves the rest alone", () => {
  assert.equal(escapeUnprintable("ok\u001b]0;pwned\u0007\r\n\u202e!"), "ok\\x1b]0;pwned\\x07\\x0d\\x0a\\u202e!");
  assert.equal(escapeUnprintable("Café 🚀"), "Café 🚀");
});
