/** A minimal grpc.health.v1 client for tests (the proto ships with grpc-health-check). */
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { protoPath } from "grpc-health-check";

type Status = string;
interface HealthStub extends grpc.Client {
  Check(req: { service: string }, cb: (err: grpc.ServiceError | null, res?: { status: Status }) => void): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<{ status: Status }>;
}
type HealthCtor = new (address: string, creds: grpc.ChannelCredentials) => HealthStub;

const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(protoPath, { enums: String })) as unknown as {
  grpc: { health: { v1: { Health: HealthCtor } } };
};

export class HealthClient {
  private readonly stub: HealthStub;

  constructor(address: string) {
    this.stub = new pkg.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
  }

  check(service: string): Promise<Status> {
    return new Promise((resolve, reject) => this.stub.Check({ service }, (err, res) => (err ? reject(err) : resolve(res?.status ?? "UNKNOWN"))));
  }

  /** Collects statuses until the stream ends or fails. */
  watch(service: string): Promise<Status[]> {
    const seen: Status[] = [];
    const stream = this.stub.Watch({ service });
    return new Promise((resolve) => {
      stream.on("data", (m: { status: Status }) => seen.push(m.status));
      stream.on("error", () => resolve(seen));
      stream.on("end", () => resolve(seen));
    });
  }

  close(): void {
    this.stub.close();
  }
}
