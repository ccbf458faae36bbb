#!/usr/bin/env node
// The `gearbox` executable: runs the TypeScript sources through tsx's loader.
import { register } from "tsx/esm/api";

register();
await import("../cli/gearbox.ts");
