/**
 * An in-process OTLP trace receiver: `opentelemetry.proto.collector.trace.v1.TraceService/Export`
 * over gRPC (what `@opentelemetry/exporter-trace-otlp-grpc` calls), decoding each request and
 * keeping its spans in plain form for assertions.
 *
 * No OTLP .proto file ships in node_modules (the OTel JS exporters encode by hand), so the
 * messages a trace export carries are declared below with protobufjs, field numbers as in
 * opentelemetry-proto's `collector/trace/v1/trace_service.proto`, `trace/v1/trace.proto`,
 * `common/v1/common.proto` and `resource/v1/resource.proto`. Fields not declared are skipped.
 */
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";

const keyValue = { fields: { key: { type: "string", id: 1 }, value: { type: "AnyValue", id: 2 } } };
const OTLP = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: { value: { oneof: ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"] } },
          fields: {
            stringValue: { type: "string", id: 1 },
            boolValue: { type: "bool", id: 2 },
            intValue: { type: "int64", id: 3 },
            doubleValue: { type: "double", id: 4 },
            arrayValue: { type: "ArrayValue", id: 5 },
            kvlistValue: { type: "KeyValueList", id: 6 },
            bytesValue: { type: "bytes", id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: "repeated", type: "AnyValue", id: 1 } } },
        KeyValueList: { fields: { values: { rule: "repeated", type: "KeyValue", id: 1 } } },
        KeyValue: keyValue,
        Resource: { fields: { attributes: { rule: "repeated", type: "KeyValue", id: 1 } } },
        InstrumentationScope: { fields: { name: { type: "string", id: 1 }, version: { type: "string", id: 2 } } },
        Status: { fields: { message: { type: "string", id: 2 }, code: { type: "int32", id: 3 } } },
        Event: {
          fields: { timeUnixNano: { type: "fixed64", id: 1 }, name: { type: "string", id: 2 }, attributes: { rule: "repeated", type: "KeyValue", id: 3 } },
        },
        Link: { fields: { traceId: { type: "bytes", id: 1 }, spanId: { type: "bytes", id: 2 } } },
        Span: {
          fields: {
            traceId: { type: "bytes", id: 1 },
            spanId: { type: "bytes", id: 2 },
            traceState: { type: "string", id: 3 },
            parentSpanId: { type: "bytes", id: 4 },
            name: { type: "string", id: 5 },
            kind: { type: "int32", id: 6 },
            startTimeUnixNano: { type: "fixed64", id: 7 },
            endTimeUnixNano: { type: "fixed64", id: 8 },
            attributes: { rule: "repeated", type: "KeyValue", id: 9 },
            events: { rule: "repeated", type: "Event", id: 11 },
            links: { rule: "repeated", type: "Link", id: 13 },
            status: { type: "Status", id: 15 },
          },
        },
        ScopeSpans: { fields: { scope: { type: "InstrumentationScope", id: 1 }, spans: { rule: "repeated", type: "Span", id: 2 } } },
        ResourceSpans: { fields: { resource: { type: "Resource", id: 1 }, scopeSpans: { rule: "repeated", type: "ScopeSpans", id: 2 } } },
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: "repeated", type: "ResourceSpans", id: 1 } } },
      },
    },
  },
});
const ExportRequest = OTLP.lookupType("otlp.ExportTraceServiceRequest");

export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };

/** OTLP span kinds (`SPAN_KIND_*`). */
export const SPAN_KIND = { unspecified: 0, internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
/** OTLP status codes (`STATUS_CODE_*`). */
export const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;

export interface ReceivedSpan {
  /** `service.name` of the resource that exported it. */
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  events: { name: string; attributes: Record<string, AttributeValue> }[];
  status: { code: number; message: string };
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the exporter's `url`. */
  endpoint: string;
  /** Every span received so far, in arrival order. */
  spans: ReceivedSpan[];
  /** Export calls received. */
  exports: number;
  /** Resolves once `predicate` holds over the spans (checked on each export), or rejects after `timeoutMs`. */
  waitFor(predicate: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface PlainKeyValue {
  key?: string;
  value?: PlainAnyValue;
}
interface PlainAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number;
  doubleValue?: number;
  arrayValue?: { values?: PlainAnyValue[] };
  kvlistValue?: { values?: PlainKeyValue[] };
  bytesValue?: string;
}
interface PlainSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes?: PlainKeyValue[];
  events?: { name?: string; attributes?: PlainKeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface PlainRequest {
  resourceSpans?: { resource?: { attributes?: PlainKeyValue[] }; scopeSpans?: { spans?: PlainSpan[] }[] }[];
}

function anyValue(v: PlainAnyValue | undefined): AttributeValue {
  if (!v) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  if (v.kvlistValue) return attributes(v.kvlistValue.values);
  if (v.bytesValue !== undefined) return hex(v.bytesValue);
  return null;
}

function attributes(list: PlainKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list ?? []) if (kv.key !== undefined) out[kv.key] = anyValue(kv.value);
  return out;
}

const hex = (base64: string | undefined): string => Buffer.from(base64 ?? "", "base64").toString("hex");

/** The spans of one decoded `ExportTraceServiceRequest`. */
export function decodeExport(bytes: Uint8Array): ReceivedSpan[] {
  const plain = ExportRequest.toObject(ExportRequest.decode(bytes), { longs: String, bytes: String, defaults: false }) as PlainRequest;
  const spans: ReceivedSpan[] = [];
  for (const rs of plain.resourceSpans ?? []) {
    const service = attributes(rs.resource?.attributes)["service.name"];
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          service: typeof service === "string" ? service : "",
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name ?? "",
          kind: s.kind ?? 0,
          startNs: BigInt(s.startTimeUnixNano ?? 0),
          endNs: BigInt(s.endTimeUnixNano ?? 0),
          attributes: attributes(s.attributes),
          events: (s.events ?? []).map((e) => ({ name: e.name ?? "", attributes: attributes(e.attributes) })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
        });
      }
    }
  }
  return spans;
}

const EXPORT_PATH = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();
  const server = new grpc.Server();
  const definition: grpc.ServiceDefinition = {
    Export: {
      path: EXPORT_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: Buffer) => value,
      requestDeserialize: (bytes: Buffer) => bytes,
      // An empty ExportTraceServiceResponse: everything accepted.
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: (bytes: Buffer) => bytes,
    },
  };
  const receiver: OtlpReceiver = {
    endpoint: "",
    spans,
    exports: 0,
    waitFor: (predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (!predicate(spans)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve([...spans]);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `OTLP receiver: condition not met within ${timeoutMs} ms; ${spans.length} spans: ${spans.map((s) => `${s.service}/${s.name}`).join(", ")}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
      }),
  };
  server.addService(definition, {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      let decoded: ReceivedSpan[];
      try {
        decoded = decodeExport(call.request);
      } catch (err) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: `undecodable ExportTraceServiceRequest: ${(err as Error).message}` });
        return;
      }
      receiver.exports++;
      spans.push(...decoded);
      callback(null, Buffer.alloc(0));
      for (const check of [...waiters]) check();
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  receiver.endpoint = `http://127.0.0.1:${port}`;
  return receiver;
}
