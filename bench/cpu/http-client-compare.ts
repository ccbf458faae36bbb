/**
 * One-off: the CPU of Node's http.request (keep-alive agent, as the front door's upstream client)
 * against undici's Pool, both calling a keep-alive JSON server in the same process, 20,000
 * requests at 1 and 16 in flight, three rounds. undici is not a dependency: install it anywhere
 * and pass its entry point:
 *   mkdir -p /tmp/undici && cd /tmp/undici && npm init -y && npm install undici@7.30.2
 *   node --import tsx bench/cpu/http-client-compare.ts /tmp/undici/node_modules/undici/index.js
 */
import { pathToFileURL } from "node:url";
import http from "node:http";
import { helloRequest, helloServer } from "./servers.ts";

interface UndiciPool {
  request(options: object): Promise<{ body: AsyncIterable<Buffer> }>;
}
const { Pool } = (await import(pathToFileURL(process.argv[2] ?? "undici").href)) as { Pool: new (origin: string, options: object) => UndiciPool };
const { port } = await helloServer(300);
const body = Buffer.from(JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }));
const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 256 });
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 64 });
function viaHttp(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const ac = new AbortController();
    const req = helloRequest(port, agent, { "content-type": "application/json", "content-length": String(body.length) }, ac.signal);
    req.once("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.once("end", () => resolve(Buffer.concat(chunks)));
      res.once("error", reject);
    });
    req.once("error", reject);
    req.end(body);
  });
}
async function viaUndici(): Promise<Buffer> {
  const ac = new AbortController();
  const { body: b } = await pool.request({
    path: "/v1/chat/completions",
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(body.length) },
    body,
    signal: ac.signal,
  });
  const chunks: Buffer[] = [];
  for await (const c of b) chunks.push(c);
  return Buffer.concat(chunks);
}
async function run(name: string, f: () => Promise<Buffer>, conc: number, n: number): Promise<void> {
  let done = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (done < n) {
        done++;
        await f();
      }
    }),
  );
  const c = process.cpuUsage(c0);
  console.log(
    name,
    conc,
    "CPU µs/req (client+server in one process)",
    ((c.user + c.system) / n).toFixed(1),
    "req/s",
    (n / ((performance.now() - t0) / 1000)).toFixed(0),
  );
}
for (let r = 0; r < 3; r++)
  for (const conc of [1, 16]) {
    await run("http  ", viaHttp, conc, 20000);
    await run("undici", viaUndici, conc, 20000);
  }
process.exit(0);
