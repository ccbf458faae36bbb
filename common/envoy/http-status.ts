/** `envoy.type.v3.StatusCode` as a number: decoded with `enums: String` it is a name (`TooManyRequests`). */
import { extProcPackage } from "./protos.ts";
import type { StatusCode__Output } from "../../proto/generated/envoy/type/v3/StatusCode.ts";

let statusNumbers: Map<string, number> | undefined;

function isEnumDescriptor(value: object): value is { value: Array<{ name: string; number: number }> } {
  return "value" in value && Array.isArray(value.value);
}

/** The HTTP status of a `StatusCode` (a name or a number); 0 when absent or unknown. */
export function httpStatusNumber(code: StatusCode__Output | number | undefined): number {
  if (code === undefined) return 0;
  if (typeof code === "number") return code;
  if (statusNumbers === undefined) {
    const descriptor = extProcPackage().envoy.type.v3.StatusCode.type;
    if (!isEnumDescriptor(descriptor)) throw new Error("StatusCode descriptor without values");
    statusNumbers = new Map(descriptor.value.map((v) => [v.name, v.number]));
  }
  return statusNumbers.get(code) ?? 0;
}
