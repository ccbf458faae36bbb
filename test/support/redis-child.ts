/**
 * For tests: a redis-server of the test's own on a free port that the test stops, freezes and
 * restarts; without persistence unless `persistDir` is given (then an append-only file there, so
 * a restart keeps the data, as a production Redis does).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { freePort } from "../../common/net/free-port.ts";

export class RedisChild {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly persistDir?: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(options: { persistDir?: string } = {}): Promise<RedisChild> {
    const server = new RedisChild(await freePort(), options.persistDir);
    await server.up();
    return server;
  }

  /** Starts (or restarts) the server on the same port: empty unless persisted. */
  async up(): Promise<void> {
    const persistence = this.persistDir === undefined ? ["--appendonly", "no"] : ["--appendonly", "yes", "--appendfsync", "always", "--dir", this.persistDir];
    const child = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", ...persistence], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.child = child;
    let out = "";
    for await (const chunk of child.stdout) {
      out += String(chunk);
      if (out.includes("Ready to accept connections")) break;
    }
    child.stdout.resume();
  }

  /** Stops the server: `SIGTERM` shuts it down, `SIGKILL` is a crash. A frozen server is woken first. */
  async down(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    child.kill("SIGCONT");
    child.kill(signal);
    await once(child, "exit");
  }

  /** Freezes (`SIGSTOP`) or wakes (`SIGCONT`) the server: it keeps its connections but answers nothing. */
  signal(signal: "SIGSTOP" | "SIGCONT"): void {
    this.child?.kill(signal);
  }
}
