/**
 * Which models an edge agent should hold, from `edge.assignments` in the config: every entry
 * whose `nodes` list the agent's node (or that lists no nodes) adds its models; a model id named
 * twice keeps its first spec. The result is sorted by id, so the same config gives the same
 * assignment (and the same version) on every control-plane replica and after restarts.
 */
import type { RawConfig } from "../extproc/config/schema.ts";
import type { ModelSpec } from "./registry/assignment.ts";

export type { ModelSpec };

export function assignmentFor(assignments: RawConfig["edge"]["assignments"], node: string): ModelSpec[] {
  const byId = new Map<string, ModelSpec>();
  for (const entry of assignments) {
    if (entry.nodes !== undefined && !entry.nodes.includes(node)) continue;
    for (const m of entry.models) if (!byId.has(m.id)) byId.set(m.id, m);
  }
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
