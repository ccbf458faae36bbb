import assert from "node:assert/strict";
import { createServer, type AddressInfo, type Server } from "node:net";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { resolveConfig } from "../extproc/config/load.ts";
import { configSchema } from "../extproc/config/schema.ts";
import { checkPorts, portsOf, startProblem } from "./ports.ts";

/** A config with the given listen ports, as `gearbox serve` would load it. */
function config(listen: Record<string, number | string>) {
  const resolved = resolveConfig(configSchema.parse({ listen }), {}, null);
  assert.ok(resolved.ok);
  return resolved.value;
}

async function occupy(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as AddressInfo).port };
}

test("portsOf: each mode's ports; the admin port only with a bootstrap admin key; 0 never checked", () => {
  const c = config({ extproc_port: 1, http_port: 2, admin_port: 3, metrics_port: 0, xds_port: 5, edge_port: 6 });
  assert.deepEqual(
    portsOf("serve", c, {}).map((p) => p.key),
    ["xds_port", "extproc_port", "http_port"],
  );
  assert.deepEqual(
    portsOf("extproc", c, { GEARBOX_ADMIN_KEY: "x" }).map((p) => p.key),
    ["extproc_port", "http_port", "admin_port"],
  );
  assert.deepEqual(
    portsOf("xds", c, { GEARBOX_ADMIN_KEY: "x" }).map((p) => p.key),
    ["xds_port"],
  );
});

test("checkPorts: a port in use is named with its setting and env variable", async () => {
  const { server, port } = await occupy();
  try {
    const checked = await checkPorts("serve", config({ host: "127.0.0.1", extproc_port: 0, http_port: port, metrics_port: 0, xds_port: 0 }), {});
    assert.deepEqual(checked, { ok: false, errors: [`port ${port} is in use (listen.http_port / GEARBOX_HTTP_PORT)`] });
  } finally {
    server.close();
  }
});

test("checkPorts: two settings on one port are refused before any probe", async () => {
  const checked = await checkPorts("xds", config({ host: "127.0.0.1", xds_port: 40123, metrics_port: 40123 }), {});
  assert.deepEqual(checked, {
    ok: false,
    errors: ["port 40123 is set twice (listen.xds_port / GEARBOX_XDS_PORT and listen.metrics_port / GEARBOX_METRICS_PORT)"],
  });
});

test("checkPorts: free ports pass and stay free", async () => {
  const { server, port } = await occupy();
  await new Promise<void>((r) => server.close(() => r()));
  const checked = await checkPorts("xds", config({ host: "127.0.0.1", xds_port: port, metrics_port: 0 }), {});
  assert.deepEqual(checked, { ok: true, value: undefined });
  const again = await occupy();
  again.server.close();
});

test("checkPorts: a host this machine does not have names listen.host", async () => {
  const checked = await checkPorts("xds", config({ host: "192.0.2.1", xds_port: 40124, metrics_port: 0 }), {});
  assert.deepEqual(checked, { ok: false, errors: ["cannot listen on 192.0.2.1: no such local address (listen.host)"] });
});

test("startProblem: Node's listen error and @grpc/grpc-js's bind error become one line", async () => {
  const { server, port } = await occupy();
  try {
    const nodeErr = await new Promise<unknown>((resolve) => {
      const s = createServer();
      s.once("error", resolve);
      s.listen(port, "127.0.0.1", () => s.close(() => resolve(undefined)));
    });
    assert.equal(startProblem(nodeErr), `port ${port} is in use`);
    const grpcServer = new grpc.Server();
    const grpcErr = await new Promise<unknown>((resolve) =>
      grpcServer.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err) => resolve(err)),
    );
    grpcServer.forceShutdown();
    assert.ok(grpcErr instanceof Error, "gRPC could not bind");
    assert.equal(startProblem(grpcErr), `port ${port} is in use`);
    assert.equal(startProblem(new Error("something else")), undefined);
  } finally {
    server.close();
  }
});
