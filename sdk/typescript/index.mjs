// The package's entry for plain Node apps: the TypeScript sources through tsx's loader (as the
// `gearbox` executable runs), then the public API. TypeScript apps may import `./src/index.ts`.
import { register } from "tsx/esm/api";

register();
const sdk = await import("./src/index.ts");

export const { Gearbox, DeviceChannel, createModelHandle, DeviceModels, GearboxError, GatewayUnreachableError } = sdk;
