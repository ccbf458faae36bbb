/**
 * The data boundary's values that only their context gives away (`detect.ts` finds the ones whose
 * shape does): a credential after its name (`password=…`, `"api_key": "…"`, `密码：…`), the password
 * in a URL, a US SSN written without dashes after its name.
 */
import type { Detection } from "./detect.ts";
import { ssnValid } from "./validators.ts";

const overlap = (a: Detection, b: Detection) => a.start < b.end && b.start < a.end;

// A credential by its name: `password=…`, `"api_key": "…"`, `密码：…` (the value is the secret).
const CREDENTIAL =
  /(?<![A-Za-z])(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|密码|口令|密钥)["'\]]?[ \t]{0,3}[:=：][ \t]{0,3}["']?/gi;
const SSN_NAMED = /\b(?:SSN|social security(?: number| no\.?)?)\b[^\d\n]{0,12}(\d{3} ?\d{2} ?\d{4})(?![\d-])/gi;
const VALUE_END = /[\s"'<>,;`)\]}]/;
// Values that name a secret instead of being one: placeholders (`your-key-here`, not `Somewhere1!`), templates,
// paths, code that reads it.
const NOT_A_VALUE =
  /^(?:[$%{<*/~]|\.\.?\/|x{4}|\.{3})|(?:^|[^a-z])(?:your|here)(?:[^a-z]|$)|^(?:example|sample|dummy)|placeholder|redacted|^(?:process\.env|os\.environ|os\.getenv|getenv|env\.|config\.|settings\.|self\.|this\.|req\.|request\.|args\.|none$|null$|undefined$|true$|false$)/i;

/**
 * Values found by their context, in order: the value after a credential's name, the password in
 * a URL's user information (`postgres://user:password@host`), a US SSN without dashes after its
 * name. A credential's value counts when it is at least six characters, holds a digit or a symbol
 * (not a plain word: `token: string`), and is not a placeholder or a reference to where the
 * secret is kept.
 */
export function valuesInContext(text: string): Detection[] {
  const out: Detection[] = [];
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    let end = at + 3;
    while (end < text.length && end < at + 260 && !/[\s/?#"'<>]/.test(text[end]!)) end++;
    const authority = text.slice(at + 3, end);
    const userEnd = authority.lastIndexOf("@");
    const colon = authority.indexOf(":");
    if (userEnd > 0 && colon >= 0 && colon < userEnd - 1) out.push({ category: "secret", start: at + 3 + colon + 1, end: at + 3 + userEnd });
  }
  // A US SSN written with spaces or none, after its name (with dashes, the expression above finds it anywhere).
  SSN_NAMED.lastIndex = 0;
  for (let m = SSN_NAMED.exec(text); m !== null; m = SSN_NAMED.exec(text)) {
    const value = m[1]!;
    const start = m.index + m[0].length - value.length;
    const digits = value.replace(/ /g, "");
    if (ssnValid(`${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}`)) out.push({ category: "national_id", start, end: start + value.length });
  }
  if (!/[:=：]/.test(text)) return out;
  CREDENTIAL.lastIndex = 0;
  for (let m = CREDENTIAL.exec(text); m !== null; m = CREDENTIAL.exec(text)) {
    const start = CREDENTIAL.lastIndex;
    let end = start;
    while (end < text.length && end < start + 256 && !VALUE_END.test(text[end]!)) end++;
    const value = text.slice(start, end);
    if (value.length < 6 || NOT_A_VALUE.test(value) || !/[\d!#$%&*+/=?@^~-]/.test(value)) continue;
    const d: Detection = { category: "secret", start, end };
    if (!out.some((o) => overlap(o, d))) out.push(d);
  }
  return out.sort((a, b) => a.start - b.start);
}

/** `found` (in order) with `values` merged in, in place: a value found by its context wins over what overlaps it. */
export function withValuesInContext(found: Detection[], values: readonly Detection[]): Detection[] {
  const kept = found.filter((d) => !values.some((v) => overlap(v, d)));
  const merged = [...kept, ...values].sort((a, b) => a.start - b.start);
  found.length = 0;
  found.push(...merged);
  return found;
}
