/** Decoding a resource of an expected type: a resource of another type is a clear error. */
import { unpackAny, type AnyMessage } from "../../common/control-plane/protos.ts";

export function unpackAs(any: AnyMessage, typeUrl: string): Record<string, unknown> {
  if (any.type_url !== typeUrl) throw new Error(`expected a ${typeUrl} resource, got ${any.type_url || "an Any without type_url"}`);
  return unpackAny(any);
}
