/** Counters of the ADS server, read by metrics and tests. */
export interface AdsStats {
  /** Streams open now (state of the world and delta). */
  openStreams: number;
  /** Responses sent. */
  pushes: number;
  /** Requests that acknowledged the latest response of their type. */
  acks: number;
  /** Requests that refused it (`error_detail` set). */
  nacks: number;
}

export function createAdsStats(): AdsStats {
  return { openStreams: 0, pushes: 0, acks: 0, nacks: 0 };
}
