/**
 * Sums up a `.cpuprofile` (`node --cpu-prof`, e.g. a variant of `cpu/variants.ts`) over its later
 * part — the measured rounds, past the warm-up — as shares of the busy samples (idle left out):
 * the leaf functions by self time, the project's functions (and pino, zod, prom-client) by
 * inclusive time, and with `--callers NAME` where a function's self time was called from.
 *
 *   node --import tsx bench/cpu/profile-summary.ts [--from 0.5] [--top 40] [--callers readUpstreamJson] FILE.cpuprofile
 *
 * `--from`: the share of the profile's time span to skip (default 0.5).
 */
import { readFileSync } from "node:fs";
import { stringArg } from "../processes.ts";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv.at(-1) ?? "";
const from = Number(stringArg("from") ?? 0.5);
const top = Number(stringArg("top") ?? 40);
const callersOf = stringArg("callers");

const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (cf: CallFrame) =>
  `${cf.functionName || "(anonymous)"} ${cf.url.replace(/.*node_modules\//, "node_modules/").replace(/^file:\/\/.*?\/(extproc|common|cli|xds|edge-agent)\//, "$1/")}:${cf.lineNumber + 1}`;
const OWN = /(^|\s)(extproc|common|cli|xds|edge-agent)\/|node_modules\/(pino|zod|prom-client)\//;

const cut = profile.startTime + (profile.endTime - profile.startTime) * from;
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const callers = new Map<string, number>();
let busy = 0;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i] ?? 0;
  const node = byId.get(profile.samples[i] ?? -1);
  if (at < cut || node === undefined || node.callFrame.functionName === "(idle)") continue;
  // A sample lasts until the next one.
  const us = profile.timeDeltas[i + 1] ?? 0;
  busy += us;
  const leaf = label(node.callFrame);
  self.set(leaf, (self.get(leaf) ?? 0) + us);
  const seen = new Set<string>();
  const chain: string[] = [];
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const name = label(byId.get(id)?.callFrame ?? { functionName: "?", url: "", lineNumber: -1 });
    if (id !== node.id && chain.length < 4) chain.push(name);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + us);
  }
  if (callersOf !== undefined && node.callFrame.functionName === callersOf) callers.set(chain.join(" < "), (callers.get(chain.join(" < ")) ?? 0) + us);
}

const print = (title: string, m: Map<string, number>, keep: (name: string) => boolean, total = busy) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...m]
    .filter(([n]) => keep(n))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`${((100 * us) / total).toFixed(2).padStart(6)} %  ${name}`);
};
console.log(`${file}: ${(busy / 1000).toFixed(0)} ms busy after the first ${(from * 100).toFixed(0)} % of the profile`);
print("self time, % of busy samples", self, () => true);
print("inclusive time of Gearbox's own functions, % of busy samples", inclusive, (n) => OWN.test(n));
if (callersOf !== undefined) {
  const total = [...callers.values()].reduce((a, b) => a + b, 0);
  print(`where ${callersOf}'s self time was called from, % of it`, callers, () => true, total);
}
