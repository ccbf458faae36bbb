import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { detect, type CustomRules } from "./detect.ts";
import { scanBody } from "./mask.ts";
import { boundaryPolicy, dataBoundarySchema } from "./policy.ts";

const PERSONAL: CustomRules = { keywords: [], patterns: [], markers: [], personal: true };
const found = (text: string, rules = PERSONAL) =>
  detect(text, rules)
    .filter((d) => d.category === "name" || d.category === "address")
    .map((d) => `${d.category}:${text.slice(d.start, d.end)}`);

describe("names", () => {
  it("find English names by title, by a known given name and surname, and a given name inside a sentence", () => {
    assert.deepEqual(found("Please ask Dr. Emily Watson to call back."), ["name:Emily Watson"]);
    assert.deepEqual(found("Mr O'Neill said the invoice is late."), ["name:O'Neill"]);
    assert.deepEqual(found("I talked to John Smith and then to Sarah."), ["name:John Smith", "name:Sarah"]);
    // A given name the dictionary lacks, before a known surname.
    assert.deepEqual(found("Yesterday I spoke with Ingrid Miller about it."), ["name:Ingrid Miller"]);
  });

  it("find Chinese names before a title or after a cue, surname from the 百家姓", () => {
    assert.deepEqual(found("请联系张伟先生，或者王小明老师。"), ["name:张伟", "name:王小明"]);
    assert.deepEqual(found("我和李伟先生见过，说王经理也在。"), ["name:李伟", "name:王"]);
    assert.deepEqual(found("收件人：欧阳娜娜，电话另告。"), ["name:欧阳娜娜"]);
    // After a frequent verb or noun (a word boundary), and a name whose first two characters are a word.
    assert.deepEqual(found("帮我总结罗勇丽医生反馈的问题，感谢王国强先生。"), ["name:罗勇丽", "name:王国强"]);
  });

  it("leave ordinary words before a title alone, and never cross punctuation", () => {
    // Each begins with a surname character (毕, 国, 公, 马) and is a word of jieba's dictionary.
    assert.deepEqual(found("毕业老师的礼物送什么好？国产女士香烟，公关小姐，毕业给老师送什么？马上给老师打电话。"), []);
    assert.deepEqual(found("毕业时，送老师什么礼物最好？"), []);
  });

  it("leave brands, cities, products, first words and job titles alone", () => {
    assert.deepEqual(
      found(
        "Mark the ticket as done. We met at Jordan Brand, the Apple Watch team and Visual Studio Code users in Paris and Austin. " +
          "Grace period ends Friday. Emily is a first word here.",
      ),
      [],
    );
    assert.deepEqual(found("项目经理和班主任老师的意见，北京分公司在人民路附近，第3号会议室，华为技术有限公司。"), []);
  });
});

describe("street addresses", () => {
  it("find English and Chinese addresses with their unit, city and postcode", () => {
    assert.deepEqual(found("Ship to 1600 Pennsylvania Avenue, Washington, DC 20500 please."), ["address:1600 Pennsylvania Avenue, Washington, DC 20500"]);
    assert.deepEqual(found("Office at 221B Baker Street, Suite 4, London."), ["address:221B Baker Street, Suite 4, London"]);
    assert.deepEqual(found("地址：北京市朝阳区建国路88号3栋2单元501室。"), ["address:北京市朝阳区建国路88号3栋2单元501室"]);
    assert.deepEqual(found("寄到上海市浦东新区世纪大道100号，谢谢"), ["address:上海市浦东新区世纪大道100号"]);
  });

  it("splits a long run of division characters one way only (it used to backtrack exponentially)", { timeout: 10_000 }, () => {
    assert.deepEqual(found(`北京市${"区".repeat(200)}。 人民路1号`), []);
  });

  it("leave a street without a number, a road alone and numbered things alone", () => {
    assert.deepEqual(found("The Main Street campaign and 12 Support tickets; 人民路上的店，2号线地铁。"), []);
  });
});

describe("personal policy", () => {
  it("is off by default: an enabled boundary does not look for names or addresses", () => {
    const policy = boundaryPolicy(dataBoundarySchema.parse({ enable: true }), "t", "chat_completions");
    assert.equal(policy?.actions.name, "allow");
    assert.equal(policy?.rules.personal, false);
    assert.deepEqual(found("Please ask Dr. Emily Watson.", policy?.rules), []);
  });

  it("redacts names and addresses with their own placeholders and restores them exactly", () => {
    const policy = boundaryPolicy(dataBoundarySchema.parse({ enable: true, personal: "redact" }), "t", "chat_completions");
    assert.ok(policy);
    const body = {
      model: "m",
      messages: [
        { role: "user", content: "Send Dr. Emily Watson's parcel to 742 Evergreen Terrace, Springfield; 抄送张伟先生，地址：杭州市西湖区文三路90号。" },
      ],
    };
    const scan = scanBody(body, policy, JSON.stringify(body));
    assert.equal(scan.kind, "redacted");
    if (scan.kind !== "redacted") return;
    const text = JSON.stringify(scan.body);
    const n = scan.masker.nonce;
    assert.match(text, new RegExp(`Send Dr\\. <NAME_1_${n}>'s parcel to <ADDRESS_1_${n}>; 抄送<NAME_2_${n}>先生，地址：<ADDRESS_2_${n}>。`));
    assert.deepEqual(scan.counts, { name: 2, address: 2 });
    assert.deepEqual(JSON.parse(scan.masker.restoreBody(Buffer.from(text)).toString()), body);
  });
});
