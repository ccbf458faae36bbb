/**
 * The admin API's device routes (port 8081, admin keys; a tenant-scoped key sees its own devices):
 *
 *   GET  /v1/devices                          the connected devices (models, active, versions, pending)
 *   POST /v1/devices/{tenant}/{id}/commands   {op: load|unload|switch, model, engine?, source?} → 202 the
 *                                             command as sent; the device acknowledges it on its channel
 *
 * The admin server starts before the front door's device API exists: the routes read the registry
 * through a `DeviceSlot` that `gearbox serve` fills.
 */
import { z } from "zod";
import { GatewayError } from "../../common/errors.ts";
import { parseBody, requireTenantAccess, type Context, type Reply, type Route } from "../admin/route.ts";
import type { DeviceStats, DeviceStatsSource } from "../telemetry/device-metrics.ts";
import type { DeviceRegistry } from "./registry.ts";

/** Where the admin routes find the device registry, and `/metrics` the device API's stats, once it runs. */
export class DeviceSlot implements DeviceStatsSource {
  registry: DeviceRegistry | undefined;
  api: { stats(): DeviceStats } | undefined;

  stats(): DeviceStats | undefined {
    return this.api?.stats();
  }
}

const commandSchema = z.strictObject({
  op: z.enum(["load", "unload", "switch"]),
  model: z.string().min(1).max(128),
  engine: z.string().min(1).max(32).optional(),
  source: z.string().min(1).max(1024).optional(),
});

function registryOf(slot: DeviceSlot): DeviceRegistry {
  if (!slot.registry) throw new GatewayError(503, "server_error", "The device API is not running on this process.", { code: "devices_unavailable" });
  return slot.registry;
}

export function deviceRoutes(slot: DeviceSlot): Route[] {
  const list = (ctx: Context): Promise<Reply> => {
    const scope = ctx.actor.tenant;
    const data = registryOf(slot)
      .list()
      .filter((d) => scope === undefined || d.tenant === scope);
    return Promise.resolve({ status: 200, body: { object: "list", data }, target: scope ?? "*" });
  };
  const command = async (ctx: Context): Promise<Reply> => {
    const [tenant = "", device = ""] = ctx.params;
    requireTenantAccess(ctx.actor, tenant);
    const body = parseBody(commandSchema, await ctx.body());
    const sent = registryOf(slot).command(tenant, device, body);
    if (!sent.ok) throw sent.errors[0] ?? new GatewayError(404, "not_found_error", "Device not connected.");
    return { status: 202, body: sent.value, target: `${tenant}/${device}`, details: { op: body.op, model: body.model } };
  };
  return [
    { method: "GET", path: /^\/v1\/devices$/, action: "devices.list", handle: list },
    { method: "POST", path: /^\/v1\/devices\/([^/]+)\/([^/]+)\/commands$/, action: "devices.command", handle: command },
  ];
}
