export { Gearbox, type ChatCompletion, type ChatCompletionChunk, type ChatCompletionCreateParams, type GearboxOptions, type RequestOptions } from "./client.ts";
export { DeviceChannel, type Policy, type Welcome } from "./channel.ts";
export { DeviceModels, type Command } from "./device-models.ts";
export { createModelHandle, type ModelHandle, type ModelSpec, type LocalAnswer, type LocalChunk, type EngineName } from "./model-handle.ts";
export { GatewayUnreachableError, GearboxError } from "./errors.ts";
