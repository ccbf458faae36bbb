/**
 * The device transport's metrics (`extproc/devices/`), read at scrape time from the device API's
 * counters (`DeviceApi.stats`). `tenant` is a configured tenant, `reason` one of the few a session
 * ends with, `outcome` one of `DECISION_OUTCOMES`.
 *
 * - `gearbox_devices_connected{tenant}`: devices with a live session on this replica.
 * - `gearbox_device_connects_total{kind}`: hellos, `new` or `reconnect` (the device resumes a
 *   policy it applied or replaces a session it held: after a drop or a gateway restart).
 * - `gearbox_device_sessions_ended_total{reason}`: `expired` (no heartbeat within `expiry_ms`:
 *   what it held reclaimed), `revoked`, `replaced` (the same device connected again), `shutdown`.
 * - `gearbox_device_decisions_total{outcome}`: each decision once, by how it ended: `cloud` (an
 *   instruction to call the cloud), `refused` (an error answer), and a device decision's outcome:
 *   `kept`, `upgraded`, `upgrade_failed`, `released` (no outcome: expired, replaced, shut down).
 * - `gearbox_device_decisions_pending`: device decisions awaiting their outcome.
 *
 * Device answers themselves are requests like any other (`gearbox_requests_total{route="edge"}`,
 * cost avoided, upgrades): the request record the outcome writes.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { DECISION_OUTCOMES, type DecisionOutcome } from "../devices/decisions.ts";

export interface DeviceStats {
  connected: ReadonlyMap<string, number>;
  connects: Readonly<{ new: number; reconnect: number }>;
  ended: ReadonlyMap<string, number>;
  decisions: Readonly<Record<DecisionOutcome, number>>;
  pending: number;
}

export interface DeviceStatsSource {
  /** Undefined until the device API runs (nothing is exported then). */
  stats(): DeviceStats | undefined;
}

export function registerDeviceMetrics(registers: Registry[], source: DeviceStatsSource): void {
  new Gauge({
    name: "gearbox_devices_connected",
    help: "Devices with a live control-channel session on this replica, by tenant.",
    labelNames: ["tenant"],
    registers,
    collect() {
      this.reset();
      for (const [tenant, n] of source.stats()?.connected ?? []) this.set({ tenant }, n);
    },
  });
  new Counter({
    name: "gearbox_device_connects_total",
    help: "Device hellos on this replica: new devices, and reconnections that resume state (after a dropped channel or a gateway restart).",
    labelNames: ["kind"],
    registers,
    collect() {
      this.reset();
      const s = source.stats();
      if (!s) return;
      this.inc({ kind: "new" }, s.connects.new);
      this.inc({ kind: "reconnect" }, s.connects.reconnect);
    },
  });
  new Counter({
    name: "gearbox_device_sessions_ended_total",
    help: "Device sessions ended on this replica, by reason (expired: no heartbeat within devices.expiry_ms, what it held reclaimed; revoked; replaced; shutdown).",
    labelNames: ["reason"],
    registers,
    collect() {
      this.reset();
      for (const [reason, n] of source.stats()?.ended ?? []) this.inc({ reason }, n);
    },
  });
  new Counter({
    name: "gearbox_device_decisions_total",
    help: "Device routing decisions by how they ended: cloud (instruction to call the cloud), refused, and a device answer's outcome: kept, upgraded, upgrade_failed, released (no outcome came).",
    labelNames: ["outcome"],
    registers,
    collect() {
      this.reset();
      const s = source.stats();
      if (!s) return;
      for (const outcome of DECISION_OUTCOMES) this.inc({ outcome }, s.decisions[outcome]);
    },
  });
  new Gauge({
    name: "gearbox_device_decisions_pending",
    help: "Device decisions on this replica awaiting their outcome (their admissions held).",
    registers,
    collect() {
      this.set(source.stats()?.pending ?? 0);
    },
  });
}
