/**
 * A minimal GGUF v3 encoder: typed metadata and F32 tensors, enough to write test models that
 * llama.cpp loads. Layout (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): header
 * (`GGUF`, version, tensor count, metadata count), metadata key/values, tensor infos, padding to
 * `general.alignment`, then each tensor's data at an aligned offset. Integers are little-endian.
 */

/** A metadata value with its GGUF type; arrays hold one element type. */
export type GgufValue =
  | { type: "u32"; value: number }
  | { type: "i32"; value: number }
  | { type: "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "string[]"; value: readonly string[] }
  | { type: "f32[]"; value: readonly number[] }
  | { type: "i32[]"; value: readonly number[] };

/** An F32 tensor. `dims` are GGUF order, innermost first (`ne0` is the row length). */
export interface GgufTensor {
  name: string;
  dims: readonly number[];
  data: Float32Array;
}

/** A whole file: metadata in write order, then tensors. */
export interface GgufFile {
  metadata: ReadonlyArray<readonly [key: string, value: GgufValue]>;
  tensors: readonly GgufTensor[];
  /** Byte alignment of tensor data; written as `general.alignment` when not 32. Default 32. */
  alignment?: number;
}

const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
const GGUF_VERSION = 3;
const GGML_TYPE_F32 = 0;

/** GGUF metadata value type ids. */
const T = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;

const alignUp = (n: number, alignment: number): number => Math.ceil(n / alignment) * alignment;

/** Sequential little-endian writer over a pre-sized buffer. */
class Cursor {
  offset = 0;
  constructor(readonly buf: Buffer) {}
  u32(v: number): void {
    this.offset = this.buf.writeUInt32LE(v, this.offset);
  }
  i32(v: number): void {
    this.offset = this.buf.writeInt32LE(v, this.offset);
  }
  u64(v: number): void {
    this.offset = this.buf.writeBigUInt64LE(BigInt(v), this.offset);
  }
  f32(v: number): void {
    this.offset = this.buf.writeFloatLE(v, this.offset);
  }
  u8(v: number): void {
    this.offset = this.buf.writeUInt8(v, this.offset);
  }
  str(s: string): void {
    const len = Buffer.byteLength(s, "utf8");
    this.u64(len);
    this.offset += this.buf.write(s, this.offset, len, "utf8");
  }
}

const strSize = (s: string): number => 8 + Buffer.byteLength(s, "utf8");

function valueSize(v: GgufValue): number {
  switch (v.type) {
    case "u32":
    case "i32":
    case "f32":
      return 4 + 4;
    case "bool":
      return 4 + 1;
    case "string":
      return 4 + strSize(v.value);
    case "string[]":
      return 4 + 4 + 8 + v.value.reduce((n, s) => n + strSize(s), 0);
    case "f32[]":
    case "i32[]":
      return 4 + 4 + 8 + 4 * v.value.length;
    default: {
      const never: never = v;
      throw new Error(`unknown GGUF value ${JSON.stringify(never)}`);
    }
  }
}

function writeValue(c: Cursor, v: GgufValue): void {
  switch (v.type) {
    case "u32":
      c.u32(T.u32);
      c.u32(v.value);
      return;
    case "i32":
      c.u32(T.i32);
      c.i32(v.value);
      return;
    case "f32":
      c.u32(T.f32);
      c.f32(v.value);
      return;
    case "bool":
      c.u32(T.bool);
      c.u8(v.value ? 1 : 0);
      return;
    case "string":
      c.u32(T.string);
      c.str(v.value);
      return;
    case "string[]":
      c.u32(T.array);
      c.u32(T.string);
      c.u64(v.value.length);
      for (const s of v.value) c.str(s);
      return;
    case "f32[]":
      c.u32(T.array);
      c.u32(T.f32);
      c.u64(v.value.length);
      for (const x of v.value) c.f32(x);
      return;
    case "i32[]":
      c.u32(T.array);
      c.u32(T.i32);
      c.u64(v.value.length);
      for (const x of v.value) c.i32(x);
      return;
    default: {
      const never: never = v;
      throw new Error(`unknown GGUF value ${JSON.stringify(never)}`);
    }
  }
}

/** Encodes a GGUF v3 file. Throws when a tensor's data does not match its dims. */
export function encodeGguf(file: GgufFile): Buffer {
  const alignment = file.alignment ?? 32;
  const metadata: Array<readonly [string, GgufValue]> = [...file.metadata];
  if (alignment !== 32 && !metadata.some(([k]) => k === "general.alignment")) {
    metadata.push(["general.alignment", { type: "u32", value: alignment }]);
  }

  // Tensor data offsets, relative to the start of the data section.
  let dataSize = 0;
  const offsets: number[] = [];
  for (const t of file.tensors) {
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (elements !== t.data.length) {
      throw new Error(`tensor ${t.name}: dims [${t.dims.join(", ")}] hold ${elements} values, data has ${t.data.length}`);
    }
    dataSize = alignUp(dataSize, alignment);
    offsets.push(dataSize);
    dataSize += t.data.byteLength;
  }

  let headerSize = 4 + 4 + 8 + 8;
  for (const [key, value] of metadata) headerSize += strSize(key) + valueSize(value);
  for (const t of file.tensors) headerSize += strSize(t.name) + 4 + 8 * t.dims.length + 4 + 8;
  const dataStart = alignUp(headerSize, alignment);

  const buf = Buffer.alloc(dataStart + dataSize);
  const c = new Cursor(buf);
  c.u32(GGUF_MAGIC);
  c.u32(GGUF_VERSION);
  c.u64(file.tensors.length);
  c.u64(metadata.length);
  for (const [key, value] of metadata) {
    c.str(key);
    writeValue(c, value);
  }
  file.tensors.forEach((t, i) => {
    c.str(t.name);
    c.u32(t.dims.length);
    for (const d of t.dims) c.u64(d);
    c.u32(GGML_TYPE_F32);
    c.u64(offsets[i] ?? 0);
  });
  file.tensors.forEach((t, i) => {
    c.offset = dataStart + (offsets[i] ?? 0);
    for (const x of t.data) c.f32(x); // element by element: little-endian whatever the host
  });
  return buf;
}
