/**
 * A stream's dynamic metadata (`StreamInfo::dynamicMetadata().filter_metadata()`): one Struct per
 * namespace. Envoy's ext_proc filter writes a response's `dynamic_metadata` here, namespace by
 * namespace, only for the namespaces in `metadata_options.receiving_namespaces.untyped`
 * (`Filter::setDynamicMetadata`, ext_proc.cc); `StreamInfoImpl::setDynamicMetadata` merges the
 * Struct into what the namespace holds (`MergeFrom`: a field set again is replaced). Route
 * matchers (`match.dynamic_metadata`) and ORIGINAL_DST's `metadata_key` read it.
 */
import type { Struct__Output } from "../../proto/generated/google/protobuf/Struct.ts";
import type { Value__Output } from "../../proto/generated/google/protobuf/Value.ts";

export class DynamicMetadata {
  private readonly namespaces = new Map<string, Map<string, Value__Output>>();

  /** `setDynamicMetadata(name, value)`: merges the Struct's fields into the namespace. */
  merge(namespace: string, value: Struct__Output | undefined): void {
    const fields = this.namespaces.get(namespace) ?? new Map<string, Value__Output>();
    for (const [key, v] of Object.entries(value?.fields ?? {})) fields.set(key, v);
    this.namespaces.set(namespace, fields);
  }

  /**
   * What ext_proc's `setDynamicMetadata` keeps of a response's `dynamic_metadata`: the namespaces
   * listed in `receiving`, each a `struct_value`; anything else is dropped (logged at debug).
   * Returns the namespaces dropped.
   */
  receive(metadata: Struct__Output | undefined, receiving: readonly string[]): string[] {
    const dropped: string[] = [];
    for (const [namespace, value] of Object.entries(metadata?.fields ?? {})) {
      if (receiving.includes(namespace)) this.merge(namespace, value.structValue);
      else dropped.push(namespace);
    }
    return dropped;
  }

  /** The string at `namespace` / `key`, undefined when absent or of another kind. */
  string(namespace: string, key: string): string | undefined {
    return this.namespaces.get(namespace)?.get(key)?.stringValue;
  }
}
