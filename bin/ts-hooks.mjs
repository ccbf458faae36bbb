// Module hooks that run Gearbox's TypeScript sources as shipped (registered by ts-loader.mjs):
// each `.ts` file is transformed by esbuild — types stripped, nothing else — when it is first
// imported, with an inline source map so stack traces name the TypeScript lines.
//
// Why not tsx's loader, which the tests and benches use: tsx always transforms with esbuild's
// `keepNames`, which wraps every function and closure Gearbox creates in a `__name()` call
// (an `Object.defineProperty` each time the closure is made). The names it keeps are the names
// the code already has (nothing is minified), so here that is pure per-request cost: about 2 %
// of the front door's CPU in a profile of `bench/cpu.bench.ts` (bench/RESULTS.md, issue 25).
import { readFile } from "node:fs/promises";
import process from "node:process";
import { fileURLToPath, URL } from "node:url";
import { transform } from "esbuild";

const TS = /\.m?ts$/;

/** `./x.js` written for a file that is `./x.ts` (TypeScript's own convention) resolves to the `.ts` file. */
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    const relative = specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("file:");
    if (err?.code !== "ERR_MODULE_NOT_FOUND" || !relative || !/\.m?js$/.test(specifier)) throw err;
    return nextResolve(specifier.replace(/js$/, "ts"), context);
  }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !TS.test(new URL(url).pathname)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const source = await readFile(file, "utf8");
  const { code } = await transform(source, {
    loader: "ts",
    format: "esm",
    target: `node${process.versions.node}`,
    sourcemap: "inline",
    sourcefile: file,
    // Only what changes emitted code: TypeScript's own rules for imports and class fields.
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
  });
  return { format: "module", source: code, shortCircuit: true };
}
