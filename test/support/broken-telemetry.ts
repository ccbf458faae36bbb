import type { Telemetry } from "../../extproc/telemetry/telemetry.ts";

/** A telemetry sink that throws on every record (a bug in it), counting the records it was handed. */
export function brokenTelemetry(): { telemetry: Telemetry; readonly handed: number } {
  let handed = 0;
  return {
    telemetry: {
      request: () => {
        handed++;
        throw new Error("telemetry sink broke");
      },
    },
    get handed() {
      return handed;
    },
  };
}
