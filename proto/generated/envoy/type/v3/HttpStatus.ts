// Original file: envoy-api/envoy/type/v3/http_status.proto

import type { StatusCode as _envoy_type_v3_StatusCode, StatusCode__Output as _envoy_type_v3_StatusCode__Output } from '../../../envoy/type/v3/StatusCode.ts';

export interface HttpStatus {
  'code'?: (_envoy_type_v3_StatusCode);
}

export interface HttpStatus__Output {
  'code'?: (_envoy_type_v3_StatusCode__Output);
}
