/**
 * callgrind's dumps read for the instruction bench (`instructions.ts`): instructions by function
 * and by call, JIT code named from V8's perf map, and V8's own work (its optimizing compilers,
 * its garbage collector) told apart from the program's.
 */
/** One dump read: instructions by function (self), and by caller → callee (inclusive). */
export interface Dump {
  total: number;
  self: Map<string, number>;
  calls: Map<string, Map<string, number>>;
}

/**
 * Reads a callgrind dump (its format: valgrind's callgrind manual, "Callgrind Format
 * Specification"): `fn=` starts a function's cost lines (`<position> <Ir>`), `cfn=` and `calls=`
 * introduce a call whose next cost line is the callee's inclusive cost; names are given once as
 * `(id) name` and then as `(id)`. `name` maps a raw name to the reported one (JIT code addresses
 * to JavaScript functions).
 */
export function readDump(text: string, name: (raw: string) => string = (raw) => raw): Dump {
  const names = new Map<string, string>();
  const resolve = (spec: string) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (!m) return name(spec);
    const [, id = "", given] = m;
    if (given !== undefined) names.set(id, name(given));
    return names.get(id) ?? `(${id})`;
  };
  const self = new Map<string, number>();
  const calls = new Map<string, Map<string, number>>();
  let fn = "";
  let callee = "";
  let inCall = false;
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("fn=")) fn = resolve(line.slice(3));
    else if (line.startsWith("cfn=")) callee = resolve(line.slice(4));
    else if (line.startsWith("calls=")) inCall = true;
    else if (/^(?:[+-]?\d+|\*) \d+$/.test(line)) {
      const cost = Number(line.slice(line.indexOf(" ") + 1));
      if (inCall) {
        const out = calls.get(fn) ?? new Map<string, number>();
        out.set(callee, (out.get(callee) ?? 0) + cost);
        calls.set(fn, out);
        inCall = false;
      } else {
        self.set(fn, (self.get(fn) ?? 0) + cost);
        total += cost;
      }
    }
  }
  return { total, self, calls };
}

/** V8's optimizing compilers (TurboFan, Maglev): work a longer warm-up would have finished. */
export const COMPILER = /v8::internal::(?:compiler|maglev|turboshaft)::|OptimizedCompilationJob|Compiler::|PipelineImpl|Turbofan|Maglev/;

/**
 * V8's garbage collector: scavenges, marking (on the main thread and concurrent), sweeping,
 * compaction. Its work comes in lumps (a major collection every few thousand requests), so a
 * repeat's count moves with whether one fell inside it; the program's own count does not.
 */
export const COLLECTOR =
  /v8::internal::(?:Heap|Scavenge|RootScavengeVisitor|MarkCompact|ConcurrentMarking|Marking|MainMarking|IncrementalMarking|Sweeper|Evacuat|GCTracer|MemoryAllocator|LocalHeap|PagedSpace|SemiSpace|NewSpace|MemoryChunk|BasicMemoryChunk|ArrayBufferSweeper|RememberedSet|SlotSet|TypedSlot|FreeList|BodyDescriptorBase|HeapObject::SizeFromMap|\(anonymous namespace\)::IterateObjectCache|GlobalHandles|StrongRootsEntry)|heap::base::|cppgc::/;

/** A dump's instructions split: the compilers', the collector's, and the rest (the program's). */
export function split(dump: Dump): { compiler: number; collector: number; program: number } {
  let [compiler, collector] = [0, 0];
  for (const [fn, ir] of dump.self) {
    if (COMPILER.test(fn)) compiler += ir;
    else if (COLLECTOR.test(fn)) collector += ir;
  }
  return { compiler, collector, program: dump.total - compiler - collector };
}

/**
 * A perf map's text (`/tmp/perf-<pid>.map`, written under `--perf-basic-prof`: `<start> <size>
 * <name>` in hex, one code object a line, in the order V8 made them) as a lookup from a JIT code
 * address — callgrind names code it has no symbol for `0x000000000d295040` — to its JavaScript
 * function; other names pass. V8 reuses the memory of code it dropped, so ranges overlap: the
 * last one written that holds the address is the code there now.
 */
export function jitNames(mapText: string): (raw: string) => string {
  const entries = mapText
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [start = "0", size = "0", ...rest] = line.split(" ");
      return { start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), name: rest.join(" ") };
    });
  const known = new Map<string, string>();
  return (raw) => {
    if (!raw.startsWith("0x")) return raw;
    let name = known.get(raw);
    if (name === undefined) {
      const at = parseInt(raw, 16);
      name = raw;
      for (let i = entries.length - 1; i >= 0; i--) {
        const e = entries[i] as (typeof entries)[number];
        if (at >= e.start && at < e.end) {
          name = e.name;
          break;
        }
      }
      known.set(raw, name);
    }
    return name;
  };
}
