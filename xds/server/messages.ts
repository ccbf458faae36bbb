/**
 * The discovery messages of `envoy.service.discovery.v3`, in the shape @grpc/proto-loader gives
 * them with Gearbox's loader options (snake_case, enums as names, unset fields absent).
 * Every field is optional, as a decoding peer sees unset fields and empty lists: absent (the
 * server always fills its responses).
 */
import type { AnyMessage } from "../../common/control-plane/protos.ts";
import type { NodeIdentity } from "../cache/cache.ts";

/** `google.rpc.Status`, as a NACK carries it. */
export interface StatusMessage {
  code?: number;
  message?: string;
}

export interface DiscoveryRequest {
  version_info?: string;
  node?: NodeIdentity | null;
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: StatusMessage | null;
}

export interface DiscoveryResponse {
  version_info?: string;
  resources?: AnyMessage[];
  type_url?: string;
  nonce?: string;
}

export interface DeltaDiscoveryRequest {
  node?: NodeIdentity | null;
  type_url?: string;
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
  initial_resource_versions?: Record<string, string>;
  response_nonce?: string;
  error_detail?: StatusMessage | null;
}

/** `envoy.service.discovery.v3.Resource`, as the server sends it (all three fields set). */
export interface DeltaResource {
  name: string;
  version: string;
  resource: AnyMessage;
}

export interface DeltaDiscoveryResponse {
  system_version_info?: string;
  resources?: DeltaResource[];
  type_url?: string;
  removed_resources?: string[];
  nonce?: string;
}
