/**
 * Builds tiny ONNX models in tests, so the ONNX engine runs real ONNX Runtime sessions without
 * downloading anything.
 *
 * The few ONNX messages needed are declared below in protobuf text and encoded with protobufjs.
 * Field numbers and types are copied from the official schema, `onnx/onnx.proto` in
 * github.com/onnx/onnx (stable since IR version 3; read at commit
 * 004aa57f442055b51af980769883b544ac4f87f2); fields a test does not need are left out, which
 * protobuf allows. Models target IR version 7 and opset 13 (Gather, ReduceMean with `axes` as an
 * attribute, as opset 13 has it).
 */
import protobuf from "protobufjs";

/** The subset of `onnx.proto` the builder writes (official field numbers). */
export const ONNX_PROTO_SUBSET = `
syntax = "proto2";
package onnx;

message AttributeProto {
  enum AttributeType {
    UNDEFINED = 0; FLOAT = 1; INT = 2; STRING = 3; TENSOR = 4; GRAPH = 5;
    FLOATS = 6; INTS = 7; STRINGS = 8; TENSORS = 9; GRAPHS = 10; SPARSE_TENSOR = 11; SPARSE_TENSORS = 12;
  }
  optional string name = 1;
  optional AttributeType type = 20;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  optional TensorProto t = 5;
  repeated float floats = 7;
  repeated int64 ints = 8;
}

message ValueInfoProto {
  optional string name = 1;
  optional TypeProto type = 2;
  optional string doc_string = 3;
}

message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  optional string domain = 7;
  repeated AttributeProto attribute = 5;
  optional string doc_string = 6;
}

message ModelProto {
  optional int64 ir_version = 1;
  repeated OperatorSetIdProto opset_import = 8;
  optional string producer_name = 2;
  optional string producer_version = 3;
  optional string domain = 4;
  optional int64 model_version = 5;
  optional string doc_string = 6;
  optional GraphProto graph = 7;
}

message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated TensorProto initializer = 5;
  optional string doc_string = 10;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
  repeated ValueInfoProto value_info = 13;
}

message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  repeated float float_data = 4 [packed = true];
  repeated int32 int32_data = 5 [packed = true];
  repeated int64 int64_data = 7 [packed = true];
  optional string name = 8;
  optional bytes raw_data = 9;
  optional string doc_string = 12;
}

message TensorShapeProto {
  message Dimension {
    oneof value {
      int64 dim_value = 1;
      string dim_param = 2;
    }
    optional string denotation = 3;
  }
  repeated Dimension dim = 1;
}

message TypeProto {
  message Tensor {
    optional int32 elem_type = 1;
    optional TensorShapeProto shape = 2;
  }
  oneof value {
    Tensor tensor_type = 1;
  }
  optional string denotation = 6;
}

message OperatorSetIdProto {
  optional string domain = 1;
  optional int64 version = 2;
}
`;

/** `TensorProto.DataType` values used here. */
export const OnnxDataType = { FLOAT: 1, INT32: 6, INT64: 7 } as const;

/** `AttributeProto.AttributeType` values used here. */
const AttributeType = { INT: 2, INTS: 7 } as const;

/** A graph input or output: a tensor of `elemType` whose dimensions are sizes or symbolic names. */
export interface OnnxValue {
  name: string;
  elemType: number;
  shape: (number | string)[];
}

/** A node attribute (only the kinds the tests need). */
export type OnnxAttribute = { name: string; int: number } | { name: string; ints: number[] };

export interface OnnxNode {
  opType: string;
  inputs: string[];
  outputs: string[];
  attributes?: OnnxAttribute[];
}

/** A float32 initializer, stored as little-endian `raw_data` like most exporters write it. */
export interface OnnxInitializer {
  name: string;
  dims: number[];
  values: Float32Array;
}

export interface OnnxGraph {
  inputs: OnnxValue[];
  outputs: OnnxValue[];
  nodes: OnnxNode[];
  initializers: OnnxInitializer[];
  opset?: number;
}

const root = protobuf.parse(ONNX_PROTO_SUBSET, { keepCase: true }).root;
const ModelProto = root.lookupType("onnx.ModelProto");

function valueInfo(value: OnnxValue): Record<string, unknown> {
  const dim = value.shape.map((d) => (typeof d === "number" ? { dim_value: d } : { dim_param: d }));
  return { name: value.name, type: { tensor_type: { elem_type: value.elemType, shape: { dim } } } };
}

function attribute(attr: OnnxAttribute): Record<string, unknown> {
  return "int" in attr ? { name: attr.name, type: AttributeType.INT, i: attr.int } : { name: attr.name, type: AttributeType.INTS, ints: attr.ints };
}

function rawLittleEndian(values: Float32Array): Uint8Array {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return bytes;
}

/** Encodes a graph as an ONNX model file's bytes. Throws if the message does not verify. */
export function encodeOnnxModel(graph: OnnxGraph): Uint8Array {
  const payload = {
    ir_version: 7,
    producer_name: "gearbox-test",
    opset_import: [{ domain: "", version: graph.opset ?? 13 }],
    graph: {
      name: "tiny",
      node: graph.nodes.map((n, i) => ({
        name: `${n.opType.toLowerCase()}_${i}`,
        op_type: n.opType,
        input: n.inputs,
        output: n.outputs,
        attribute: (n.attributes ?? []).map(attribute),
      })),
      initializer: graph.initializers.map((t) => ({ name: t.name, dims: t.dims, data_type: OnnxDataType.FLOAT, raw_data: rawLittleEndian(t.values) })),
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map(valueInfo),
    },
  };
  const problem = ModelProto.verify(payload);
  if (problem) throw new Error(`Bad ONNX model: ${problem}`);
  return ModelProto.encode(ModelProto.fromObject(payload)).finish();
}

/** Decodes model bytes back to a plain object (snake_case keys, int64 as numbers), for checks. */
export function decodeOnnxModel(bytes: Uint8Array): Record<string, unknown> {
  return ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, enums: String, bytes: Array, defaults: false });
}

/** A deterministic `rows × hidden` table in [-1, 1) (mulberry32 from `seed`). */
export function seededTable(rows: number, hidden: number, seed: number): Float32Array {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Float32Array.from({ length: rows * hidden }, () => next() * 2 - 1);
}

/** Options of `embeddingLookupModel`. */
export interface LookupModelOptions {
  /** The embedding table, `rows × hidden`. */
  table: Float32Array;
  hidden: number;
  /** `"last_hidden_state"` (default): `Gather` only. `"sentence_embedding"`: then `ReduceMean` over the sequence (padding included). */
  output?: "last_hidden_state" | "sentence_embedding";
  /** Declare a `token_type_ids` input too (unused by the graph, as inputs of real exports may be). */
  tokenTypeIds?: boolean;
  /** Element type of the id inputs. Default INT64. */
  idType?: number;
}

/**
 * A sentence-embedding-shaped model: inputs `input_ids` and `attention_mask` `[batch, seq]`,
 * `Gather(embedding_table, input_ids)` → `last_hidden_state` `[batch, seq, hidden]` (or, pooled
 * by the model, `sentence_embedding` `[batch, hidden]`). The mask is an input the graph ignores:
 * masking is the engine's job, which is what the tests check.
 */
export function embeddingLookupModel(options: LookupModelOptions): Uint8Array {
  const rows = options.table.length / options.hidden;
  const idType = options.idType ?? OnnxDataType.INT64;
  const hidden = options.hidden;
  const inputs: OnnxValue[] = [
    { name: "input_ids", elemType: idType, shape: ["batch", "seq"] },
    { name: "attention_mask", elemType: idType, shape: ["batch", "seq"] },
  ];
  if (options.tokenTypeIds) inputs.push({ name: "token_type_ids", elemType: idType, shape: ["batch", "seq"] });
  const gather: OnnxNode = {
    opType: "Gather",
    inputs: ["embedding_table", "input_ids"],
    outputs: ["last_hidden_state"],
    attributes: [{ name: "axis", int: 0 }],
  };
  const pooled = options.output === "sentence_embedding";
  const nodes = pooled
    ? [
        gather,
        {
          opType: "ReduceMean",
          inputs: ["last_hidden_state"],
          outputs: ["sentence_embedding"],
          attributes: [
            { name: "axes", ints: [1] },
            { name: "keepdims", int: 0 },
          ],
        },
      ]
    : [gather];
  return encodeOnnxModel({
    inputs,
    outputs: [
      pooled
        ? { name: "sentence_embedding", elemType: OnnxDataType.FLOAT, shape: ["batch", hidden] }
        : { name: "last_hidden_state", elemType: OnnxDataType.FLOAT, shape: ["batch", "seq", hidden] },
    ],
    nodes,
    initializers: [{ name: "embedding_table", dims: [rows, options.hidden], values: options.table }],
  });
}
