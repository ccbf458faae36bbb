// Original file: envoy-api/envoy/service/ext_proc/v3/external_processor.proto


export interface BodyMutation {
  'body'?: (Buffer | Uint8Array | string);
  'clear_body'?: (boolean);
  'mutation'?: "body"|"clear_body";
}

export interface BodyMutation__Output {
  'body'?: (Buffer);
  'clear_body'?: (boolean);
  'mutation'?: "body"|"clear_body";
}
