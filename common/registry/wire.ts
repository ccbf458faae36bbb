/**
 * The messages of `gearbox.v1.EdgeRegistryService/Connect` as @grpc/proto-loader carries them
 * (`common/control-plane/protos.ts` options: snake_case fields, 64-bit integers as strings, `oneof kind` named, and
 * no defaults: a field the peer left at its zero value arrives `undefined`). Both ends (the
 * control plane's service and the edge agent's client) read and write these shapes; every field
 * is optional because that is what arrives, and readers normalise.
 */

/** `gearbox.v1.LoadedModel`. */
export interface LoadedModelMessage {
  id?: string;
  engine?: string;
}

/** `gearbox.v1.Capacity`. */
export interface CapacityMessage {
  max_concurrent?: number;
  max_queue?: number;
}

/** `gearbox.v1.Hello`. */
export interface HelloMessage {
  agent_id?: string;
  node?: string;
  address?: string;
  models?: LoadedModelMessage[];
  capacity?: CapacityMessage;
  acked_version?: string;
  labels?: Record<string, string>;
}

/** `gearbox.v1.Heartbeat`. */
export interface HeartbeatMessage {
  in_flight?: number;
  queued?: number;
  models?: LoadedModelMessage[];
}

/** `gearbox.v1.AssignmentAck`: an ACK, or a NACK when `error_detail` is set. */
export interface AckMessage {
  version?: string;
  nonce?: string;
  error_detail?: string;
}

/** `gearbox.v1.ConnectRequest` (agent → control plane). */
export interface ConnectRequest {
  kind?: "hello" | "heartbeat" | "ack";
  hello?: HelloMessage;
  heartbeat?: HeartbeatMessage;
  ack?: AckMessage;
}

/** `google.protobuf.Duration`. */
export interface DurationMessage {
  seconds?: string | number;
  nanos?: number;
}

/** `gearbox.v1.ModelSpec`, one model of an assignment (zero numbers mean "the engine's default"). */
export interface ModelSpecMessage {
  id?: string;
  engine?: string;
  source?: string;
  threads?: number;
  context_length?: number;
  tokenizer?: string;
}

/** `gearbox.v1.EdgeAssignment`. */
export interface EdgeAssignmentMessage {
  agent_id?: string;
  models?: ModelSpecMessage[];
}

/** `gearbox.v1.Welcome`. */
export interface WelcomeMessage {
  session_id?: string;
  heartbeat_interval?: DurationMessage;
  expiry?: DurationMessage;
}

/** `gearbox.v1.Assignment`. */
export interface AssignmentMessage {
  version?: string;
  nonce?: string;
  assignment?: EdgeAssignmentMessage;
}

/** `gearbox.v1.ConnectResponse` (control plane → agent). */
export interface ConnectResponse {
  kind?: "welcome" | "assignment";
  welcome?: WelcomeMessage;
  assignment?: AssignmentMessage;
}

/** Milliseconds → `Duration`. */
export function durationOf(ms: number): DurationMessage {
  const seconds = Math.floor(ms / 1000);
  return { seconds: String(seconds), nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/** `Duration` → milliseconds (0 when absent). */
export function millisecondsOf(duration: DurationMessage | undefined): number {
  return Number(duration?.seconds ?? 0) * 1000 + (duration?.nanos ?? 0) / 1e6;
}
