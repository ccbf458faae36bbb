/**
 * Gearbox's own resources over ADS:
 *
 * - `gearbox.v1.RoutingPolicy`: the `route:` section of gearbox.yaml as a Struct, for ext_proc
 *   replicas (they validate it with the config schema and NACK what fails);
 * - `gearbox.v1.EdgeAssignment` (named by agent id): the models one edge agent should hold.
 *
 * Decoders throw, naming the problem, on a resource of another type or a malformed one; the
 * ADS client turns that into a NACK.
 */
import type { ModelSpec } from "../assignments.ts";
import { jsonToStruct, packAny, structToJson, TYPE_URLS, type AnyMessage } from "../../common/control-plane/protos.ts";
import { canonicalModels } from "../registry/assignment.ts";
import type { ModelSpecMessage } from "../../common/registry/wire.ts";
import { unpackAs } from "./unpack.ts";

export interface RoutingPolicy {
  name: string;
  route: Record<string, unknown>;
}

/** One model of an assignment (`tokenizer` only for ONNX models). */
export type AssignedModel = ModelSpec;

export interface EdgeAssignment {
  agentId: string;
  models: readonly AssignedModel[];
}

export function routingPolicyResource(name: string, route: Record<string, unknown>): AnyMessage {
  return packAny(TYPE_URLS.routingPolicy, { name, route: jsonToStruct(route) });
}

export function decodeRoutingPolicy(any: AnyMessage): RoutingPolicy {
  const policy = unpackAs(any, TYPE_URLS.routingPolicy);
  return { name: typeof policy["name"] === "string" ? policy["name"] : "", route: structToJson(policy["route"]) };
}

export function edgeAssignmentResource(assignment: EdgeAssignment): AnyMessage {
  return packAny(TYPE_URLS.edgeAssignment, {
    agent_id: assignment.agentId,
    models: canonicalModels(assignment.models),
  });
}

export function decodeEdgeAssignment(any: AnyMessage): EdgeAssignment {
  const message = unpackAs(any, TYPE_URLS.edgeAssignment);
  const agentId = typeof message["agent_id"] === "string" ? message["agent_id"] : "";
  const models = ((message["models"] as ModelSpecMessage[] | undefined) ?? []).map((m, i): AssignedModel => {
    if (!m.id || !m.engine || !m.source) throw new Error(`EdgeAssignment ${JSON.stringify(agentId)}: models[${i}] needs id, engine and source`);
    return {
      id: m.id,
      engine: m.engine,
      source: m.source,
      ...(m.threads ? { threads: m.threads } : {}),
      ...(m.context_length ? { context_length: m.context_length } : {}),
      ...(m.tokenizer !== undefined && m.tokenizer !== "" && { tokenizer: m.tokenizer }),
    };
  });
  return { agentId, models };
}
