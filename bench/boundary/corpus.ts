/**
 * The data boundary's labelled corpus, generated deterministically (seeded PRNG): realistic
 * English and Chinese sentences with planted values of every structured category, and hard
 * negatives (order and tracking numbers, invoice ids, dates and times, version and build
 * strings, hashes, UUIDs, amounts, snake_case identifiers). `personalCorpus`: the same for
 * person names and street addresses, with their own hard negatives (brands, cities alone,
 * capitalised first words, product names, job titles, roads without a number). The name pools
 * are wider than the detector's dictionaries (recall is measured on names it does not know too).
 * `npm run bench:boundary -- --write` also writes both to bench/boundary/corpus.jsonl.
 */
export type Structured = "email" | "phone" | "national_id" | "bank_card" | "iban" | "ip" | "secret";
export type Label = Structured | "name" | "address";

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
  const gens: Record<Structured, () => string> = {
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
  const labels = Object.keys(gens) as Structured[];
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

/** Names and street addresses, English and Chinese, planted in sentences beside hard negatives. */
export function personalCorpus(n = 2000, seed = 2323): Sample[] {
  const r = prng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  // Given names and surnames: about two thirds in the detector's dictionaries, the rest not.
  const given = "Emily James Sarah Michael Olivia David Jennifer Robert Laura Daniel Priya Olumide Siobhan Mateus Aditi Kwame Ingrid Tomasz Yusuf Keiko".split(
    " ",
  );
  const family =
    "Smith Johnson Garcia Chen Wang Nguyen Patel Kim Brown Miller Raman Adeyemi O'Neill Kowalski Haddad Lindqvist Okafor Moreau Castellanos Fitzgerald".split(
      " ",
    );
  const titles = ["Mr", "Ms", "Mrs", "Dr", "Prof.", "Dr."];
  const cnSurnames = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢".split("");
  const cnGiven = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰志红思雨晨浩宇欣怡子涵梓轩".split("");
  const cnTitles = ["先生", "女士", "经理", "老师", "医生", "律师"];
  const cnCues = ["联系人", "收件人：", "负责人", "我叫", "姓名："];
  const enName = () =>
    pick([() => `${pick(given)} ${pick(family)}`, () => `${pick(titles)} ${pick(family)}`, () => `${pick(titles)} ${pick(given)} ${pick(family)}`])();
  const cnName = () => pick(cnSurnames) + pick(cnGiven) + (r() < 0.5 ? pick(cnGiven) : "");
  const streets = "Main Oak Maple Cedar Elm Pine Washington Lake Hill Park Sunset Baker Market Mission Evergreen".split(" ");
  const suffixes = "Street St Avenue Ave Road Rd Boulevard Blvd Lane Drive Way Court Place".split(" ");
  const cities = "Springfield Portland Austin Denver Boston Seattle Oakland Madison".split(" ");
  const enAddress = () =>
    `${int(1, 9999)} ${pick(streets)}${r() < 0.3 ? ` ${pick(["Hill", "Park", "Valley"])}` : ""} ${pick(suffixes)}` +
    (r() < 0.3 ? `, Suite ${int(100, 999)}` : "") +
    (r() < 0.6 ? `, ${pick(cities)}${r() < 0.6 ? `, ${pick(["CA", "OR", "TX", "MA", "WA"])} ${int(10000, 99999)}` : ""}` : "");
  const cnCities = ["北京市", "上海市", "广州市", "深圳市", "杭州市", "成都市", "武汉市", "南京市"];
  const cnDistricts = ["朝阳区", "浦东新区", "天河区", "南山区", "西湖区", "武侯区", "江汉区", "鼓楼区"];
  const cnRoads = ["建国路", "世纪大道", "天河路", "科技园南路", "文三路", "人民南路", "解放大道", "中山路", "南京东路", "长安街"];
  const cnAddress = () =>
    (r() < 0.3 ? pick(["广东省", "浙江省", "江苏省"]) : "") +
    pick(cnCities) +
    (r() < 0.8 ? pick(cnDistricts) : "") +
    pick(cnRoads) +
    `${int(1, 999)}号` +
    (r() < 0.4 ? `${int(1, 20)}栋${r() < 0.5 ? `${int(1, 4)}单元` : ""}${int(101, 2505)}室` : "");
  const negatives = [
    () =>
      `the ${pick(["Apple Watch", "Visual Studio Code", "Microsoft Teams", "Google Maps", "Amazon Prime", "Jordan Brand", "Ford Motor", "Tesla Model"])} integration`,
    () => `our office in ${pick(["Paris", "London", "Sydney", "Austin", "Boston", "Denver", "Berlin", "Toronto"])}`,
    () => `${pick(["Grace", "Will", "Summer", "Victoria", "Chase", "Max"])} period notes`,
    () => `the ${pick(["Main Street", "Park Avenue", "Sunset Boulevard"])} campaign`,
    () => `${int(2, 40)} ${pick(["Team", "Office", "Support"])} tickets`,
    () =>
      `${pick(["Product", "Sales", "Engineering", "Customer"])} ${pick(["Review", "Update", "Meeting"])} for ${pick(["Monday", "Friday", "March", "June"])}`,
    () => pick(["项目经理", "部门经理", "产品经理", "班主任老师", "客户经理"]) + "的意见",
    () => pick(["北京", "上海", "杭州", "深圳"]) + pick(["的天气", "分公司", "的会议", "团队"]),
    () => pick(["人民路", "中山路", "长安街"]) + pick(["上的店", "附近", "那边"]),
    () => `第${int(1, 30)}号${pick(["文件", "会议室", "工单"])}`,
    () => pick(["华为技术有限公司", "阿里巴巴集团", "腾讯云", "张家界旅游", "王府井百货"]),
    () => `${int(2, 20)}号线地铁`,
  ];
  const templates: [string, string][] = [
    ["Please forward the contract to {v} before Friday, and mention {n}.", "en"],
    ["Summarize the complaint from {v} about {n}.", "en"],
    ["Yesterday I spoke with {v}; the notes mention {n}.", "en"],
    ["Ship the replacement to {v} and log {n}.", "en"],
    ["The customer lives at {v}; see {n}.", "en"],
    ["请把合同转给{v}，并参考{n}。", "zh"],
    ["帮我总结{v}反馈的问题，涉及{n}。", "zh"],
    ["快递寄到{v}，备注{n}。", "zh"],
  ];
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) {
    const [tpl, lang] = pick(templates);
    const negative = r() < 0.35;
    const label: Label = r() < 0.5 ? "name" : "address";
    const cn = lang === "zh";
    let value: string;
    if (negative) value = pick(negatives)();
    else if (label === "name") value = cn ? pick([() => cnName() + pick(cnTitles), () => pick(cnCues) + cnName()])() : enName();
    else value = cn ? cnAddress() : enAddress();
    // The planted span: a Chinese name without its title or cue (what the placeholder replaces).
    let [a, b] = [0, value.length];
    if (!negative && label === "name" && cn) {
      const cue = cnCues.find((c) => value.startsWith(c));
      if (cue) a = cue.length;
      else b = value.length - 2;
    }
    if (!negative && label === "name" && !cn) {
      const t = titles.find((x) => value.startsWith(`${x} `));
      if (t) a = t.length + 1;
    }
    const at = tpl.indexOf("{v}");
    const text = (tpl.slice(0, at) + value + tpl.slice(at + 3)).replace("{n}", pick(negatives)());
    out.push({ text, spans: negative ? [] : [[at + a, at + b, label]] });
  }
  return out;
}
