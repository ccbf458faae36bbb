/** Starts an HTTP server on `port` (0: any free port) and gives back its port and a graceful close. */
import type http from "node:http";
import { answerMalformedHttp } from "../../common/net/malformed-http.ts";

export interface Listening {
  port: number;
  /** Stops accepting, lets requests in flight finish, drops idle keep-alive connections. */
  close(): Promise<void>;
}

export async function listenHttp(server: http.Server, port: number, host: string): Promise<Listening> {
  answerMalformedHttp(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
