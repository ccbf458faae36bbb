import assert from "node:assert/strict";
import { test } from "node:test";
import { parseXfcc, principalFromXfcc } from "./xfcc.ts";

// What an Istio sidecar's inbound listener appends (APPEND_FORWARD; Subject, URI, DNS).
const ISTIO = 'By=spiffe://cluster.local/ns/gearbox/sa/gearbox;Hash=2a5c7e4f;Subject="";URI=spiffe://cluster.local/ns/shop/sa/web';

test("principalFromXfcc: the first URI of the last (nearest) element, quoted or not", () => {
  assert.equal(principalFromXfcc(ISTIO), "spiffe://cluster.local/ns/shop/sa/web");
  assert.equal(principalFromXfcc('Hash=1;URI=spiffe://a/ns/x/sa/one,Hash=2;Subject="CN=x";URI="spiffe://a/ns/y/sa/two"'), "spiffe://a/ns/y/sa/two");
  assert.equal(principalFromXfcc("Hash=1;URI=spiffe://a/ns/x/sa/one;URI=spiffe://a/ns/x/sa/other"), "spiffe://a/ns/x/sa/one");
  assert.equal(principalFromXfcc("hash=1;uri=spiffe://a/ns/x/sa/one"), "spiffe://a/ns/x/sa/one", "keys are case-insensitive");
});

test("principalFromXfcc: commas and semicolons inside quoted values do not split elements", () => {
  // A naive split on "," would take `O=evil;URI=spiffe://…/admin"` as the last element.
  const header = `${ISTIO},Hash=3;Subject="CN=web,O=evil;URI=spiffe://cluster.local/ns/x/sa/admin";URI=spiffe://cluster.local/ns/shop/sa/api`;
  assert.equal(principalFromXfcc(header), "spiffe://cluster.local/ns/shop/sa/api");
  const escaped = 'Subject="CN=\\"a,b\\"";URI=spiffe://cluster.local/ns/shop/sa/api';
  assert.deepEqual(parseXfcc(escaped), {
    ok: true,
    value: [
      [
        ["subject", 'CN="a,b"'],
        ["uri", "spiffe://cluster.local/ns/shop/sa/api"],
      ],
    ],
  });
});

test("principalFromXfcc: nobody for a header without a SPIFFE URI or one it cannot read", () => {
  assert.equal(principalFromXfcc(undefined), undefined);
  assert.equal(principalFromXfcc("Hash=abc;DNS=web.shop"), undefined);
  assert.equal(principalFromXfcc("Hash=abc;URI=https://example.com/me"), undefined, "not a SPIFFE ID");
  assert.equal(principalFromXfcc('Hash=abc;URI="spiffe://a/ns/x/sa/one'), undefined, "unterminated quote");
  assert.equal(principalFromXfcc("Hash=abc;URI=spiffe://a/ns/x/sa/one,"), undefined, "empty element");
  assert.equal(principalFromXfcc("garbage;URI=spiffe://a/ns/x/sa/one"), undefined, "pair without =");
  assert.equal(principalFromXfcc('URI=spiffe://a/ns/x/sa/"one"'), undefined, "stray quote");
  // The last element decides even when an earlier one names someone.
  assert.equal(principalFromXfcc("URI=spiffe://a/ns/x/sa/one,Hash=2;DNS=b"), undefined);
});
