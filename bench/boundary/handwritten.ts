/**
 * Values written by hand outside the seeded corpus (`corpus.ts`): the shapes a real prompt holds
 * that the corpus's generator does not write (national phone formats, other vendors' keys,
 * credentials after their name, webhook URLs…). Prints each with what the detectors found, and
 * how many of the expected categories were found.
 *   node --import tsx bench/boundary/handwritten.ts
 */
import { detect } from "../../extproc/boundary/detect.ts";

const RULES = { keywords: [], patterns: [], markers: [] };
// [the category that must be found, the text]
const CASES: [string, string][] = [
  ["phone", "Call me at +44 20 7946 0958 tomorrow."],
  ["phone", "My number is (555) 123-4567."],
  ["phone", "Reach me on 555-123-4567 after 5."],
  ["phone", "Ring 020 7946 0958 please."],
  ["phone", "电话：138 0013 8000"],
  ["phone", "手机13800138000联系"],
  ["phone", "call +1 (415) 555-2671"],
  ["phone", "tel: +49 30 901820"],
  ["phone", "My cell is 415.555.2671"],
  ["phone", "+86 138-0013-8000"],
  ["phone", "固话 010-12345678"],
  ["email", "write to john.doe+tag@example.co.uk"],
  ["email", "邮箱：zhang.san@qq.com"],
  ["national_id", "身份证号 11010519491231002X"],
  ["national_id", "SSN 078-05-1120"],
  ["national_id", "ssn: 219 09 9999"],
  ["bank_card", "card 4111 1111 1111 1111 exp 12/26"],
  ["bank_card", "卡号6222021234567890128"],
  ["bank_card", "Amex 3782 822463 10005"],
  ["bank_card", "card 4111-1111-1111-1111"],
  ["iban", "IBAN DE89 3704 0044 0532 0130 00"],
  ["iban", "GB82WEST12345698765432"],
  ["iban", "FR14 2004 1010 0505 0001 3M02 606"],
  ["ip", "server at 192.168.1.20"],
  ["ip", "ipv6 2001:db8:85a3::8a2e:370:7334"],
  ["ip", "fe80::1ff:fe23:4567:890a%eth0"],
  ["secret", "key sk-proj-abc123DEF456ghi789JKL012mno345PQR678stu901VWX"],
  ["secret", "AKIAIOSFODNN7EXAMPLE and secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  ["secret", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a"],
  ["secret", "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"],
  ["secret", "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc"],
  ["secret", "google AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"],
  ["secret", "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
  ["secret", "anthropic sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ-abcdefgh"],
  ["secret", "password=Sup3rS3cret!2024"],
  ["secret", "postgres://admin:hunter2pass@db.internal:5432/prod"],
  ["secret", "npm_abcdefghijklmnopqrstuvwxyz0123456789"],
  ["secret", "glpat-xxxxxxxxxxxxxxxxxxxx"],
  ["ip", "connect to 10.0.0.1:8080 now"],
  ["ip", "bind [2001:db8::1]:443"],
  ["national_id", "身份证 110105 19491231 002X"],
  ["phone", "+86 10 1234 5678"],
  ["phone", "+1-415-555-2671"],
  ["phone", "call 415 555 2671 today"],
  ["phone", "1-800-555-0199"],
  ["phone", "(+44) 20 7946 0958"],
  ["phone", "+86-138-0013-8000"],
  ["phone", "tel.+33 1 42 68 53 00"],
  ["phone", "phone: 0049 30 901820"],
  ["bank_card", "5500 0000 0000 0004"],
  ["bank_card", "6011000000000004"],
  ["bank_card", "6212 3456 7890 1234 567"],
  ["email", "Email: First.Last@sub.domain.io."],
  ["email", "<mailto:ops@example.org>"],
  ["secret", "Authorization: Bearer 8f3KdL92mZxQ7vT1pR4sW6yB0nH5jC2e"],
  ["secret", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"],
  ["secret", "ya29.a0AfH6SMBx3kLmN0pQrStUvWxYz1234567890abcdefGHIJ"],
  ["secret", "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  ["secret", "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz123456"],
  ["secret", "x-api-key: 3f9a7c2e-1b4d-4e8f-9a6b-2c5d7e8f9a0b"],
  ["secret", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"],
  ["iban", "iban: NL91ABNA0417164300"],
  ["iban", "ES91 2100 0418 4502 0005 1332"],
  ["ip", "client 203.0.113.195, proxy 198.51.100.17"],
];

let found = 0;
for (const [want, text] of CASES) {
  const ds = detect(text, RULES);
  const ok = ds.some((d) => d.category === want);
  if (ok) found++;
  const got = ds.map((d) => `${d.category}:${JSON.stringify(text.slice(d.start, d.end))}`).join(" | ");
  console.log(`${ok ? "ok  " : "MISS"} ${want.padEnd(12)} ${JSON.stringify(text).slice(0, 72).padEnd(72)} => ${got}`);
}
console.log(`\n${found} of ${CASES.length} found`);
