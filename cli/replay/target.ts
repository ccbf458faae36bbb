/**
 * Where a replay sends its requests. A target takes a request (path, headers, body) and returns
 * what the client would have seen: status, response headers, the whole body, and when the first
 * and last body bytes arrived. Transport failures are answers too (`status: 0`, `error`), never
 * exceptions, so one bad request cannot stop a run.
 */
export interface TargetRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Send as Envoy's observability mode does: Gearbox decides and records, the request goes on untouched. */
  shadow: boolean;
}

export interface TargetResponse {
  status: number;
  /** Lower-case names, first value. */
  headers: Record<string, string>;
  body: Buffer;
  latencyMs: number;
  /** Until the first body bytes; undefined when there were none. */
  ttftMs: number | undefined;
  /** Why no HTTP answer came (connection refused, timeout, ext_proc stream error…). */
  error?: string;
}

export interface Target {
  readonly kind: "front_door" | "ext_proc";
  send(request: TargetRequest): Promise<TargetResponse>;
  close(): Promise<void>;
}
