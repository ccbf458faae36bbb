/**
 * The upstream client's two trims of issue 25's fifteenth pass, measured alone: CPU per call of
 * one client process calling a keep-alive JSON server in another process, with (1) Node's agent
 * and the headers as an object, (2) the warm path (`warmFirst`) and the headers as an object,
 * (3) the warm path and the headers as a name/value list, as `sendUpstream` sends them. The front
 * door's upstream headers; 1 and 16 calls in flight; seven rounds of 5,000 calls, the order of the
 * three turned each round; medians.
 *
 *   node --import tsx bench/cpu/agent-compare.ts
 */
import http from "node:http";
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { warmFirst } from "../../extproc/http/upstream-client.ts";
import { helloRequest, helloServer } from "./servers.ts";

if (process.argv[2] === "server") {
  const { port } = await helloServer(50);
  process.send?.({ port });
} else {
  const child = fork(fileURLToPath(import.meta.url), ["server"], { execArgv: ["--import", "tsx"] });
  const port = await new Promise<number>((resolve) => child.once("message", (m: { port: number }) => resolve(m.port)));
  const body = Buffer.from(JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }));
  const headers: Record<string, string> = {
    "user-agent": "curl/7.88.1",
    accept: "*/*",
    "content-type": "application/json",
    authorization: "Bearer sk-bench",
    "x-gearbox-upstream": "openai",
    "x-gearbox-request-id": "f0536623-a8ff-460b-891f-8acfaeb50e0b",
    "accept-encoding": "identity",
  };
  const options = { keepAlive: true, keepAliveMsecs: 30_000, maxFreeSockets: 256 };
  const asObject = () => Object.assign({}, headers, { "content-length": String(body.length) });
  const asList = () => {
    const list: string[] = [];
    for (const name in headers) list.push(name, headers[name] as string);
    list.push("content-length", String(body.length), "host", `127.0.0.1:${port}`);
    return list;
  };
  const variants: Record<string, { agent: http.Agent; headers: () => http.OutgoingHttpHeaders | string[] }> = {
    "Node's agent": { agent: new http.Agent(options), headers: asObject },
    "warm path": { agent: warmFirst(new http.Agent(options)), headers: asObject },
    "warm path + header list": { agent: warmFirst(new http.Agent(options)), headers: asList },
  };
  const call = ({ agent, headers: make }: (typeof variants)[string]) =>
    new Promise<void>((resolve, reject) => {
      const req = helloRequest(port, agent, make() as http.OutgoingHttpHeaders);
      req.on("response", (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end(body);
    });
  const run = async (variant: (typeof variants)[string], calls: number, inFlight: number) => {
    const start = process.cpuUsage();
    let left = calls;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (left-- > 0) await call(variant);
      }),
    );
    const used = process.cpuUsage(start);
    return (used.user + used.system) / calls;
  };
  const names = Object.keys(variants);
  for (const inFlight of [1, 16]) {
    for (const name of names) await run(variants[name] as (typeof variants)[string], 3000, inFlight);
    const results = new Map<string, number[]>(names.map((n) => [n, []]));
    for (let round = 0; round < 7; round++)
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length] as string;
        results.get(name)?.push(await run(variants[name] as (typeof variants)[string], 5000, inFlight));
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
    console.log(`${inFlight} in flight: ${names.map((n) => `${n} ${median(results.get(n) ?? []).toFixed(1)} µs`).join(", ")}`);
  }
  child.kill();
}
