/**
 * Metrics whose values live elsewhere and are read when Prometheus scrapes: a gauge of a current
 * value, and a counter mirroring a running total another component keeps.
 */
import { Counter, Gauge, type Registry } from "prom-client";

export function gaugeFrom(registers: Registry[], name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}

export function totalFrom(registers: Registry[], name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers,
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
