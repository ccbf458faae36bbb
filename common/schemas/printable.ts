/**
 * Names people give things (key names, a tenant's model list) end up in terminals (`gearbox keys
 * list`), logs and dashboards, so they must be plain printable text: no C0/C1 control characters
 * (CR, LF, NUL, ESC — terminal escape injection), no DEL, no Unicode line or paragraph separators,
 * no bidirectional overrides (text that reads differently than it is).
 */

/** Every character a name may not hold. Shared with the CLI's escaping of what it prints. */
// eslint-disable-next-line no-control-regex
export const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

// eslint-disable-next-line no-control-regex
const ANY_UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

export function isPrintable(text: string): boolean {
  return !ANY_UNPRINTABLE.test(text);
}

export const NOT_PRINTABLE_MESSAGE = "must be printable text: no control characters (CR, LF, NUL, ESC…), line separators or bidirectional overrides";

/** `text` with each unprintable character as a visible escape (`\x1b`, `\u202e`), for terminals. */
export function escapeUnprintable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
