/**
 * The structured detectors' validators: a candidate the expressions found is kept only when its
 * checksum or shape holds, so order numbers, hashes and identifiers fall out.
 */

const ID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
const ID_CHECK = "10X98765432";

/** GB 11643-1999: 6-digit region, birth date, sequence, ISO 7064 MOD 11-2 check character. */
export function residentIdValid(v: string): boolean {
  if (v.length !== 18 || v[0] === "0") return false;
  const year = Number(v.slice(6, 10));
  const month = Number(v.slice(10, 12));
  const day = Number(v.slice(12, 14));
  if (year < 1900 || year > 2100 || month < 1 || month > 12 || day < 1 || day > 31) return false;
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (v.charCodeAt(i) - 48) * ID_WEIGHTS[i]!;
  return ID_CHECK[sum % 11] === v[17]!.toUpperCase();
}

/** US SSN: area not 000, 666 or 9xx; group not 00; serial not 0000. */
export function ssnValid(v: string): boolean {
  const area = v.slice(0, 3);
  return area !== "000" && area !== "666" && area[0] !== "9" && v.slice(4, 6) !== "00" && v.slice(7) !== "0000";
}

/** A payment card: 13–19 digits, a known network's prefix (Visa, Mastercard, Amex, Discover, UnionPay, JCB, Diners), Luhn. */
export function bankCardValid(v: string): boolean {
  const digits = v.replace(/[ -]/g, "");
  if (digits.length < 13 || digits.length > 19) return false;
  if (!/^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|2|4[4-9]|5)|35)/.test(digits)) return false;
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616: country, check digits, BBAN; valid when the rearranged number mod 97 is 1. */
export function ibanValid(v: string): boolean {
  const s = v.replace(/ /g, "");
  if (s.length < 15 || s.length > 34) return false;
  const r = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (let i = 0; i < r.length; i++) {
    const c = r.charCodeAt(i);
    if (c >= 48 && c <= 57) rem = (rem * 10 + c - 48) % 97;
    else if (c >= 65 && c <= 90) rem = (rem * 100 + c - 55) % 97;
    else return false;
  }
  return rem === 1;
}

/**
 * A token with no known prefix counts as a secret when it mixes upper case, lower case and digits
 * and its characters are spread (Shannon entropy ≥ 4 bits). Pure hex (hashes, UUIDs) and words
 * joined by `_`/`-` (identifiers) do not.
 */
export function looksRandom(v: string): boolean {
  if (/^[0-9a-fA-F-]+$/.test(v)) return false;
  if (!/[a-z]/.test(v) || !/[A-Z]/.test(v) || !/\d/.test(v)) return false;
  const counts = new Map<string, number>();
  for (const c of v) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / v.length;
    h -= p * Math.log2(p);
  }
  return h >= 4;
}
