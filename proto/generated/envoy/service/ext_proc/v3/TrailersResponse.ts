// Original file: envoy-api/envoy/service/ext_proc/v3/external_processor.proto

import type { HeaderMutation as _envoy_service_ext_proc_v3_HeaderMutation, HeaderMutation__Output as _envoy_service_ext_proc_v3_HeaderMutation__Output } from '../../../../envoy/service/ext_proc/v3/HeaderMutation.ts';

export interface TrailersResponse {
  'header_mutation'?: (_envoy_service_ext_proc_v3_HeaderMutation | null);
}

export interface TrailersResponse__Output {
  'header_mutation'?: (_envoy_service_ext_proc_v3_HeaderMutation__Output);
}
