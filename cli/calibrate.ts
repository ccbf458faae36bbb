/**
 * `gearbox calibrate <labelled file|folder>…`: fits the routing threshold on a confidence bound
 * for a quality target (or an edge share) and prints the `route:` policy (or writes it to --out).
 */
import { readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { CliIo } from "./admin-client.ts";
import { calibrate, policyYaml, type CalibrationTarget } from "../extproc/routing/calibration/calibrate.ts";
import { parseLabelled, type LabelledRow } from "../extproc/routing/calibration/labelled.ts";

export const CALIBRATE_USAGE = `usage: gearbox calibrate <labelled file or folder>… [options]

Fits the edge/cloud threshold from labelled prompts and prints the route: policy (YAML) that keeps
the target on a one-sided confidence bound, not on the point estimate; load it in gearbox.yaml or
let the control plane push it. Files: CSV with a 'prompt' column and the edge's and the cloud's
correctness (RouteLLM's layout: prompt, weak model, strong model; True/False or 0–1 scores), or
JSON lines {"prompt", "edge", "cloud", "group"?, "intent"?}. A folder means its .csv files.
The bound's standard error is clustered by group (the group column, else each file).

  --target-quality <0-1>    quality to keep relative to all-cloud (default 0.95)
  --target-edge-share <0-1> instead: the share of prompts to keep on the edge (the bound is reported)
  --confidence <0-1>        one-sided confidence of the bound (default 0.95)
  --edge-column <name>      the edge model's column (default: edge/edge_correct/weak, else the first after prompt)
  --cloud-column <name>     the cloud model's column (default: cloud/cloud_correct/strong, else the second)
  --group-column <name>     cluster column (default: the file name)
  --min-intent-rows <n>     fit an intent of its own from this many rows (default 400; 0 = one threshold)
  --out <file>              write the policy there instead of stdout
`;

async function expand(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) {
      for (const f of (await readdir(p)).sort()) if (/\.csv$/i.test(f)) files.push(join(p, f));
    } else files.push(p);
  }
  return files;
}

function fraction(name: string, value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : `--${name}: '${value}' is not a number from 0 to 1`;
}

export async function runCalibrate(args: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        help: { type: "boolean", short: "h" },
        "target-quality": { type: "string" },
        "target-edge-share": { type: "string" },
        confidence: { type: "string" },
        "edge-column": { type: "string" },
        "cloud-column": { type: "string" },
        "group-column": { type: "string" },
        "min-intent-rows": { type: "string" },
        out: { type: "string" },
      },
    });
  } catch (err) {
    io.err(`gearbox calibrate: ${err instanceof Error ? err.message : String(err)}\n\n${CALIBRATE_USAGE}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help === true) {
    io.out(CALIBRATE_USAGE);
    return 0;
  }
  const quality = fraction("target-quality", v["target-quality"]);
  const share = fraction("target-edge-share", v["target-edge-share"]);
  const confidence = fraction("confidence", v.confidence);
  const minRows = v["min-intent-rows"] === undefined ? 400 : Number(v["min-intent-rows"]);
  const problems = [quality, share, confidence].filter((x): x is string => typeof x === "string");
  if (!Number.isInteger(minRows) || minRows < 0) problems.push(`--min-intent-rows: '${v["min-intent-rows"]}' is not a whole number`);
  if (quality !== undefined && share !== undefined) problems.push("--target-quality and --target-edge-share: give one, not both");
  if (parsed.positionals.length === 0) problems.push("no labelled file given");
  if (problems.length > 0) {
    io.err(`gearbox calibrate: ${problems.join("; ")}\n\n${CALIBRATE_USAGE}`);
    return 2;
  }
  const target: CalibrationTarget = typeof share === "number" ? { edgeShare: share } : { quality: typeof quality === "number" ? quality : 0.95 };
  const rows: LabelledRow[] = [];
  try {
    for (const file of await expand(parsed.positionals)) {
      const result = parseLabelled(await readFile(file, "utf8"), file, {
        ...(v["edge-column"] !== undefined && { edge: v["edge-column"] }),
        ...(v["cloud-column"] !== undefined && { cloud: v["cloud-column"] }),
        ...(v["group-column"] !== undefined && { group: v["group-column"] }),
      });
      if (!result.ok) {
        io.err(`gearbox calibrate: ${result.errors.join("\n  ")}\n`);
        return 1;
      }
      rows.push(...result.value.rows);
    }
  } catch (err) {
    io.err(`gearbox calibrate: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  if (rows.length === 0) {
    io.err("gearbox calibrate: no labelled rows in the files given\n");
    return 1;
  }
  const result = calibrate(rows, { target, ...(typeof confidence === "number" && { confidence }), minIntentRows: minRows });
  const yaml = policyYaml(result, parsed.positionals.join(" "));
  if (v.out !== undefined) {
    await writeFile(v.out, yaml);
    io.out(`gearbox calibrate: ${rows.length} rows → ${v.out} (complexity_threshold ${result.base.threshold})\n`);
  } else io.out(yaml);
  return 0;
}
