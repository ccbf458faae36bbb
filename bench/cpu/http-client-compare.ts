/**
 * The upstream client alone, against undici: CPU per call of one client process calling a
 * keep-alive JSON server in another process, with the front door's headers — (1) `sendUpstream`
 * as it ships (Node's `http.request`, keep-alive agent with the warm path, deadlines, a
 * `CallAbort`), (2) undici's `Pool.request` (a stream body, as the fourth pass measured it),
 * (3) undici's `Client.dispatch` (callbacks, no stream), (4) undici's `Agent.dispatch` (what a
 * gateway calling many origins would use), (5) the socket alone: the request written in one
 * piece and the answer's length read from its head — no HTTP client at all, the floor. One turn
 * of the event loop between calls (the front door's next call comes from the network), 1 and 16
 * in flight, seven rounds of 4,000 calls, the order turned each round; medians.
 *
 * undici is not a dependency: install it anywhere and pass its entry point.
 *   mkdir -p /tmp/undici && cd /tmp/undici && npm init -y && npm install undici@7.30.2
 *   node --import tsx bench/cpu/http-client-compare.ts /tmp/undici/node_modules/undici/index.js
 *
 * What this measures is a warm loop: in the eighteenth pass of issue 25 (bench/RESULTS.md) the
 * front door on undici's `Agent.dispatch` measured 9 µs cheaper per call here and 4–12 % dearer
 * per request in the whole gateway, paired.
 */
import { fork } from "node:child_process";
import net from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CallAbort } from "../../common/net/call-abort.ts";
import { readAll, sendUpstream } from "../../extproc/http/upstream-client.ts";
import { helloServer } from "./servers.ts";

interface Handler {
  onRequestStart(): void;
  onResponseStart(controller: unknown, status: number): void;
  onResponseData(controller: unknown, chunk: Buffer): void;
  onResponseEnd(): void;
  onResponseError(controller: unknown, err: Error): void;
}
interface Dispatching {
  dispatch(options: object, handler: Handler): boolean;
}
interface Undici {
  Pool: new (origin: string, options?: object) => { request(options: object): Promise<{ body: AsyncIterable<Buffer> }> };
  Client: new (origin: string, options?: object) => Dispatching;
  Agent: new (options?: object) => Dispatching;
}

if (process.argv[2] === "server") {
  const { port } = await helloServer(50);
  process.send?.({ port });
} else {
  const undici = (await import(pathToFileURL(process.argv[2] ?? "undici").href)) as Undici;
  const child = fork(fileURLToPath(import.meta.url), ["server"], { execArgv: ["--import", "tsx"] });
  const port = await new Promise<number>((resolve) => child.once("message", (m: { port: number }) => resolve(m.port)));
  const origin = `http://127.0.0.1:${port}`;
  const path = "/v1/chat/completions";
  const body = Buffer.from(JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }));
  const headers: Record<string, string> = {
    "content-type": "application/json",
    authorization: "Bearer sk-bench",
    "x-gearbox-request-id": "f0536623-a8ff-460b-891f-8acfaeb50e0b",
    "accept-encoding": "identity",
  };
  const list = Object.entries(headers).flat();
  const deadlines = { connectMs: 5_000, firstByteMs: 30_000, timeout: () => new Error("deadline") };

  const pool = new undici.Pool(origin);
  const client = new undici.Client(origin);
  const agent = new undici.Agent({ keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
  const dispatched = (via: Dispatching) => () =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      via.dispatch(
        { origin, path, method: "POST", headers: list, body },
        {
          onRequestStart() {},
          onResponseStart() {},
          onResponseData: (_c, chunk) => void chunks.push(chunk),
          onResponseEnd: () => resolve(Buffer.concat(chunks)),
          onResponseError: (_c, err) => reject(err),
        },
      );
    });
  const head = Buffer.from(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("")}content-length: ${body.length}\r\n\r\n`,
    "latin1",
  );
  const sockets: (() => Promise<Buffer>)[] = [];
  /** One raw connection per call in flight: the request written whole, the answer read to its content-length. */
  const rawSocket = async (): Promise<() => Promise<Buffer>> => {
    const socket = net.connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    await new Promise((resolve) => socket.once("connect", resolve));
    let pending: ((b: Buffer) => void) | undefined;
    let got: Buffer = Buffer.alloc(0);
    let bodyAt = -1;
    let need = -1;
    socket.on("data", (d: Buffer) => {
      got = got.length === 0 ? d : Buffer.concat([got, d]);
      if (need < 0) {
        const end = got.indexOf("\r\n\r\n");
        if (end < 0) return;
        bodyAt = end + 4;
        need = bodyAt + Number(/content-length: *(\d+)/i.exec(got.toString("latin1", 0, end))?.[1] ?? 0);
      }
      if (got.length < need) return;
      const answer = got.subarray(bodyAt, need);
      got = Buffer.alloc(0);
      need = -1;
      pending?.(answer);
    });
    return () =>
      new Promise<Buffer>((resolve) => {
        pending = resolve;
        socket.write(Buffer.concat([head, body]));
      });
  };
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const variants: Record<string, (slot: number) => Promise<unknown>> = {
    "sendUpstream (ships)": async () =>
      readAll(await sendUpstream({ secure: false, hostname: "127.0.0.1", port, path }, headers, body, new CallAbort(), deadlines)),
    "undici Pool.request": async () => {
      const res = await pool.request({ path, method: "POST", headers, body });
      const chunks: Buffer[] = [];
      for await (const c of res.body) chunks.push(c);
      return Buffer.concat(chunks);
    },
    "undici Client.dispatch": dispatched(client),
    "undici Agent.dispatch": dispatched(agent),
    "the socket alone": (slot) => (sockets[slot] as () => Promise<Buffer>)(),
  };
  const names = Object.keys(variants);
  const run = async (name: string, calls: number, inFlight: number) => {
    const call = variants[name] as (slot: number) => Promise<unknown>;
    let left = calls;
    const start = process.cpuUsage();
    await Promise.all(
      Array.from({ length: inFlight }, async (_, slot) => {
        while (left-- > 0) {
          await call(slot);
          await turn();
        }
      }),
    );
    const used = process.cpuUsage(start);
    return (used.user + used.system) / calls;
  };
  for (const inFlight of [1, 16]) {
    while (sockets.length < inFlight) sockets.push(await rawSocket());
    for (const name of names) await run(name, 2000, inFlight);
    const results = new Map<string, number[]>(names.map((n) => [n, []]));
    for (let round = 0; round < 7; round++)
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length] as string;
        results.get(name)?.push(await run(name, 4000, inFlight));
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
    console.log(`${inFlight} in flight, CPU µs per call: ${names.map((n) => `${n} ${median(results.get(n) ?? []).toFixed(1)}`).join(", ")}`);
  }
  child.kill();
  process.exit(0);
}
