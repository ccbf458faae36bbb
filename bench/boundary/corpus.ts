/**
 * The data boundary's labelled corpus, generated deterministically (seeded PRNG): realistic
 * English and Chinese sentences with planted values of every structured category, and hard
 * negatives (order and tracking numbers, invoice ids, dates and times, version and build
 * strings, hashes, UUIDs, amounts, snake_case identifiers). `npm run bench:boundary -- --write`
 * also writes it to bench/boundary/corpus.jsonl for inspection.
 */
export type Label = "email" | "phone" | "national_id" | "bank_card" | "iban" | "ip" | "secret";

export interface Sample {
  text: string;
  /** Planted values: [start, end, category]. */
  spans: [number, number, Label][];
}

/** mulberry32. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function corpus(n = 4000, seed = 23): Sample[] {
  const r = prng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const digits = (k: number) => Array.from({ length: k }, () => int(0, 9)).join("");
  const alnum = (k: number, set = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") =>
    Array.from({ length: k }, () => set[int(0, set.length - 1)]).join("");
  const hex = (k: number) => alnum(k, "0123456789abcdef");

  const luhnComplete = (body: string) => {
    for (let c = 0; c <= 9; c++) {
      const d = body + c;
      let sum = 0;
      for (let i = d.length - 1, dbl = false; i >= 0; i--, dbl = !dbl) {
        let x = d.charCodeAt(i) - 48;
        if (dbl && (x *= 2) > 9) x -= 9;
        sum += x;
      }
      if (sum % 10 === 0) return d;
    }
    throw new Error("unreachable");
  };
  const W = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
  const residentId = () => {
    const body =
      pick(["110105", "310104", "440305", "510107", "330106"]) +
      String(int(1950, 2005)) +
      String(int(1, 12)).padStart(2, "0") +
      String(int(1, 28)).padStart(2, "0") +
      digits(3);
    let s = 0;
    for (let i = 0; i < 17; i++) s += (body.charCodeAt(i) - 48) * W[i]!;
    return body + "10X98765432"[s % 11];
  };
  const iban = () => {
    const [cc, bban] = pick([
      ["DE", () => digits(18)],
      ["GB", () => alnum(4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") + digits(14)],
      ["FR", () => digits(23)],
      ["NL", () => alnum(4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") + digits(10)],
    ] as const);
    const b = bban();
    const numeric = (b + cc + "00").replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
    let rem = 0;
    for (const ch of numeric) rem = (rem * 10 + Number(ch)) % 97;
    const s = cc + String(98 - rem).padStart(2, "0") + b;
    return r() < 0.5 ? s : s.replace(/(.{4})/g, "$1 ").trim();
  };
  const card = () => {
    const [prefix, len] = pick([
      ["4", 16],
      ["51", 16],
      ["55", 16],
      ["2221", 16],
      ["34", 15],
      ["37", 15],
      ["6011", 16],
      ["62", 16],
      ["62", 19],
    ] as const);
    const d = luhnComplete(prefix + digits(len - prefix.length - 1));
    return len === 16 && r() < 0.5 ? d.replace(/(\d{4})(?=\d)/g, r() < 0.5 ? "$1 " : "$1-") : d;
  };
  const gens: Record<Label, () => string> = {
    email: () =>
      `${pick(["ann", "li.wei", "j.smith", "zhang_san", "ops", "m.garcia", "wang.fang"])}${r() < 0.5 ? int(1, 99) : ""}@${pick(["corp.example.com", "mail.example.cn", "acme.io", "163.com", "qq.com", "example.org"])}`,
    phone: () =>
      pick([
        () => `1${pick(["3", "5", "7", "8", "9"])}${digits(9)}`,
        () => `+86 1${pick(["3", "8", "9"])}${digits(1)} ${digits(4)} ${digits(4)}`,
        () => `+1 ${int(201, 989)}-${int(200, 999)}-${digits(4)}`,
        () => `+44 20 ${digits(4)} ${digits(4)}`,
        () => `(${int(201, 989)}) ${int(200, 999)}-${digits(4)}`,
        () => `+49 30 ${digits(8)}`,
      ])(),
    national_id: () =>
      r() < 0.6 ? residentId() : `${String(int(1, 665)).padStart(3, "0")}-${String(int(1, 99)).padStart(2, "0")}-${String(int(1, 9999)).padStart(4, "0")}`,
    bank_card: card,
    iban,
    ip: () =>
      r() < 0.7
        ? `${int(1, 223)}.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}`
        : pick([`2001:db8:${hex(4)}::${hex(2)}`, `fe80::${hex(4)}:${hex(4)}:${hex(4)}:${hex(4)}`, `2400:cb00:2048:1::${hex(3)}`]),
    secret: () =>
      pick([
        () => `sk-proj-${alnum(40)}`,
        () => `sk-ant-api03-${alnum(48, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")}`,
        () => `AKIA${alnum(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`,
        () => `ghp_${alnum(36)}`,
        () => `xoxb-${digits(11)}-${digits(12)}-${alnum(24)}`,
        () => `AIza${alnum(35)}`,
        () => alnum(32),
      ])(),
  };
  const negatives = [
    () => `order ${digits(16)}`,
    () => `订单号 ${digits(18)}`,
    () => `tracking SF${digits(12)}`,
    () => `invoice INV-${int(2019, 2025)}-${digits(6)}`,
    () =>
      `${int(2019, 2025)}-${String(int(1, 12)).padStart(2, "0")}-${String(int(1, 28)).padStart(2, "0")} ${String(int(0, 23)).padStart(2, "0")}:${String(int(0, 59)).padStart(2, "0")}:${String(int(0, 59)).padStart(2, "0")}`,
    () => `v${int(0, 9)}.${int(0, 30)}.${int(0, 99)}`,
    () => `build ${int(1, 12)}.${int(0, 9)}.${int(1000, 22000)}.${int(1, 999)}`,
    () => `version ${int(1, 4)}.${int(0, 20)}.${int(0, 9)}.${int(0, 9)}`,
    () => `sha256 ${hex(64)}`,
    () => `commit ${hex(40)}`,
    () => `md5 ${hex(32)}`,
    () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`,
    () => `¥${int(1, 99)},${digits(3)}.${digits(2)}`,
    () => `$${int(1, 999)},${digits(3)}`,
    () => `room ${int(100, 999)}, ext ${digits(4)}`,
    () => `${pick(["user_profile_settings_table", "customer_order_history_view", "payment_gateway_retry_policy"])}`,
    () => `工单 ${int(2023, 2025)}${digits(8)}`,
    () => `ISBN 978-${int(0, 9)}-${digits(3)}-${digits(5)}-${int(0, 9)}`,
    () => `${int(1, 12)}/${int(1, 28)}/${int(2019, 2025)}`,
    () => `ratio 3.14159.${int(1, 9)}`,
    () => `part no. ${digits(4)}-${digits(4)}-${digits(4)}`,
  ];
  const templates: [string, string][] = [
    ["Please contact me at {v} about the renewal.", "en"],
    ["Customer says her number is {v}; call back after 5pm.", "en"],
    ["The refund should go to {v} by Friday.", "en"],
    ["Log shows a login from {v} at night, see {n}.", "en"],
    ["Summarize this ticket: user {v} reported {n} failing.", "en"],
    ["请把合同发到 {v}，谢谢。", "zh"],
    ["客户的联系方式是 {v}，{n} 已经处理。", "zh"],
    ["帮我总结一下：用户提供了 {v}，问题见 {n}。", "zh"],
    ["退款请打到 {v}，{n}。", "zh"],
    ["Deploy with {v} then check {n} in the dashboard.", "en"],
  ];
  const labels = Object.keys(gens) as Label[];
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) {
    const [tpl] = pick(templates);
    const negative = r() < 0.35;
    const label = pick(labels);
    const value = negative ? pick(negatives)() : gens[label]();
    const neg = pick(negatives)();
    const at = tpl.indexOf("{v}");
    let text = tpl.slice(0, at) + value + tpl.slice(at + 3);
    const spans: [number, number, Label][] = negative ? [] : [[at, at + value.length, label]];
    text = text.replace("{n}", neg);
    out.push({ text, spans });
  }
  return out;
}
