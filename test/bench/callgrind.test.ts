/**
 * The instruction bench's reading of callgrind dumps (bench/cpu/callgrind.ts): self costs, a
 * call's inclusive cost kept apart from its caller's own, names given once then by id, JIT
 * addresses named from V8's perf map, and V8's compilers and collector told apart.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jitNames, readDump, split } from "../../bench/cpu/callgrind.ts";

// Shaped as callgrind 3.19 writes it with --dump-line=yes (positions are line numbers, compressed).
const DUMP = `# callgrind format
version: 1
positions: line
events: Ir
summary: 1600

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) 0x000000000d295040
0 100
+2 50
cfn=(2) v8::internal::compiler::GraphReducer::ReduceTop()
calls=3 0
* 400
cfn=(3) Builtins_KeyedLoadIC_Megamorphic
calls=10 0
0 200

fn=(2)
0 400

fn=(3)
0 200

fn=(4) v8::internal::ConcurrentMarking::RunMajor(v8::JobDelegate*)
-1 300
fn=(5) 0x00000000000000ff
0 550
`;

describe("callgrind dumps", () => {
  it("counts each function's own instructions once, and a call's cost apart from its caller's", () => {
    const d = readDump(DUMP);
    assert.equal(d.total, 100 + 50 + 400 + 200 + 300 + 550);
    assert.equal(d.self.get("0x000000000d295040"), 150);
    assert.equal(d.self.get("Builtins_KeyedLoadIC_Megamorphic"), 200);
    assert.deepEqual(
      [...(d.calls.get("0x000000000d295040") ?? [])],
      [
        ["v8::internal::compiler::GraphReducer::ReduceTop()", 400],
        ["Builtins_KeyedLoadIC_Megamorphic", 200],
      ],
    );
  });

  it("names JIT code by the perf map, the last code written at an address, and leaves unknown addresses and symbols as they are", () => {
    const names = jitNames("d295000 80 JS:~dropped old.js:1:1\nd295000 100 JS:*proxy file:///front-door.ts:97:14\nd100000 10 JS:~other x.js:1:1\n");
    assert.equal(names("0x000000000d295040"), "JS:*proxy file:///front-door.ts:97:14");
    assert.equal(names("0x000000000d295100"), "0x000000000d295100"); // one past the end
    assert.equal(names("Builtins_LoadIC"), "Builtins_LoadIC");
    const d = readDump(DUMP, names);
    assert.equal(d.self.get("JS:*proxy file:///front-door.ts:97:14"), 150);
    assert.equal(d.self.get("0x00000000000000ff"), 550);
  });

  it("tells V8's compilers and collector apart from the program", () => {
    assert.deepEqual(split(readDump(DUMP)), { compiler: 400, collector: 300, program: 150 + 200 + 550 });
  });
});
