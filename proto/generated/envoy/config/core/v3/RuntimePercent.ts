// Original file: envoy-api/envoy/config/core/v3/base.proto

import type { Percent as _envoy_type_v3_Percent, Percent__Output as _envoy_type_v3_Percent__Output } from '../../../../envoy/type/v3/Percent.ts';

export interface RuntimePercent {
  'default_value'?: (_envoy_type_v3_Percent | null);
  'runtime_key'?: (string);
}

export interface RuntimePercent__Output {
  'default_value'?: (_envoy_type_v3_Percent__Output);
  'runtime_key'?: (string);
}
