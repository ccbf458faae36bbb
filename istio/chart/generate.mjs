#!/usr/bin/env node
// Regenerates istio/chart/gearbox/templates from istio/base (kubectl kustomize). See test/istio/chart.ts.
import process from "node:process";
import { register } from "tsx/esm/api";

register();
const { generateTemplates, writeTemplates } = await import("../../test/istio/chart.ts");
const files = generateTemplates();
writeTemplates(files);
process.stdout.write(`wrote ${files.size} templates\n`);
