/** `gearbox ca init | issue | rotate | bundle`: see usage.ts. */
import { existsSync } from "node:fs";
import path from "node:path";
import { rootCertificates } from "node:tls";
import type { CliIo } from "../admin-client.ts";
import { parseOrExit, parseVerbArgs, UsageProblem } from "../file-verbs.ts";
import { createCa, describeCertificate, hostProblem, issueLeaf, signedBy, type KeyPair } from "./authority.ts";
import { bundleOf, CA_FILES, readCa, readLeaf, writeCa, writeLeaf, type CaDirectory } from "./files.ts";
import { bundleConfigMap, caSecret, leafSecret, parseRef, type ObjectRef } from "./kubernetes.ts";
import { CA_USAGE } from "./usage.ts";

export const DEFAULT_HOSTS = ["api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com"] as const;

type Verb = "init" | "issue" | "rotate" | "bundle";

export interface CaOptions {
  verb: Verb;
  dir: string;
  hosts: string[];
  permit: string[];
  days: number;
  hours: number;
  renewWithinHours: number;
  out: string | undefined;
  secret: ObjectRef | undefined;
  secretNamespace: string | undefined;
  configMap: ObjectRef | undefined;
  rotateCa: boolean;
  retirePrevious: boolean;
  force: boolean;
}

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageProblem(`--${name} '${value}' is not a positive number`);
  return n;
}

function ref(name: string, value: string | undefined): ObjectRef | undefined {
  if (value === undefined) return undefined;
  const parsed = parseRef(value);
  if (typeof parsed === "string") throw new UsageProblem(`--${name} ${parsed}`);
  return parsed;
}

function hostList(values: string[]): string[] {
  const hosts = values.flatMap((v) => v.split(",")).filter((h) => h !== "");
  for (const h of hosts) {
    const problem = hostProblem(h);
    if (problem) throw new UsageProblem(problem);
  }
  return [...new Set(hosts)];
}

export function parseCaArgs(args: string[]): CaOptions {
  const parsed = parseVerbArgs(args, {
    dir: { type: "string" },
    host: { type: "string", multiple: true },
    hosts: { type: "string" },
    days: { type: "string" },
    hours: { type: "string" },
    "renew-within": { type: "string" },
    out: { type: "string" },
    secret: { type: "string" },
    "secret-namespace": { type: "string" },
    configmap: { type: "string" },
    ca: { type: "boolean" },
    "retire-previous": { type: "boolean" },
    force: { type: "boolean" },
  });
  const { values, positionals } = parsed;
  const [verb, ...extra] = positionals;
  if (verb !== "init" && verb !== "issue" && verb !== "rotate" && verb !== "bundle")
    throw new UsageProblem(verb === undefined ? "which: init, issue, rotate or bundle?" : `unknown subcommand '${verb}'`);
  if (extra.length > 0) throw new UsageProblem(`unexpected argument '${extra[0]}'`);
  if (!values.dir) throw new UsageProblem("--dir <ca dir> is required");
  const hours = positive("hours", values.hours, 48);
  const secretNamespace = values["secret-namespace"];
  if (secretNamespace !== undefined && typeof parseRef(`${secretNamespace}/x`) === "string")
    throw new UsageProblem(`--secret-namespace '${secretNamespace}' is not a namespace name`);
  const options: CaOptions = {
    verb,
    dir: values.dir,
    hosts: hostList(values.host ?? []),
    permit: values.hosts === undefined ? [...DEFAULT_HOSTS] : hostList([values.hosts]),
    days: positive("days", values.days, 1825),
    hours,
    renewWithinHours: positive("renew-within", values["renew-within"], hours / 3),
    out: values.out,
    secret: ref("secret", values.secret),
    secretNamespace,
    configMap: ref("configmap", values.configmap),
    rotateCa: values.ca ?? false,
    retirePrevious: values["retire-previous"] ?? false,
    force: values.force ?? false,
  };
  const leafVerb = verb === "issue" || (verb === "rotate" && !options.rotateCa && !options.retirePrevious);
  if (leafVerb && options.hosts.length === 0) throw new UsageProblem(`${verb} needs at least one --host`);
  if (verb === "issue" && (options.out === undefined) === (secretNamespace === undefined))
    throw new UsageProblem("issue needs one of --out <dir> or --secret-namespace <ns>");
  if (leafVerb && verb === "rotate" && options.out === undefined) throw new UsageProblem("rotate needs --out <dir> (the leaves it checks)");
  if (options.rotateCa && options.retirePrevious) throw new UsageProblem("--ca and --retire-previous are two steps: run them apart");
  if (options.renewWithinHours >= hours) throw new UsageProblem(`--renew-within (${options.renewWithinHours} h) must be below --hours (${hours} h)`);
  return options;
}

/** The Kubernetes Secret name for a host's leaf (what istio/components/trust mounts into istio-proxy). */
export function leafSecretName(host: string): string {
  return `gearbox-intercept-${host.replaceAll(".", "-")}`;
}

const stamp = (now: Date) => now.toISOString().replace(/[-:.]/g, "");

/** Why the published leaf must be replaced, or undefined when it can stay. */
function staleReason(leaf: KeyPair | undefined, ca: KeyPair, host: string, renewWithinHours: number, now: Date): string | undefined {
  if (!leaf) return "none yet";
  const info = describeCertificate(leaf.certPem);
  if (!info.dnsNames.includes(host)) return `it names ${info.dnsNames.join(", ") || "no host"}`;
  if (!signedBy(leaf.certPem, ca.certPem)) return "signed by another CA";
  const left = info.notAfter.getTime() - now.getTime();
  if (left <= renewWithinHours * 3_600_000) return `expires ${info.notAfter.toISOString()}`;
  return undefined;
}

export function runCaVerb(options: CaOptions, io: CliIo, now = new Date()): number {
  switch (options.verb) {
    case "init": {
      if (!options.force && existsSync(path.join(options.dir, CA_FILES.key)))
        throw new Error(`${options.dir} already holds a CA (--force replaces it and breaks every leaf it signed; 'rotate --ca' keeps trust)`);
      const ca: CaDirectory = { current: createCa({ hosts: options.permit, days: options.days, now }), previousCertPem: undefined };
      writeCa(options.dir, ca);
      io.err(`gearbox ca: new CA in ${options.dir} for ${options.permit.join(", ")}; ${describeCertificate(ca.current.certPem).fingerprint256}\n`);
      if (options.secret) io.out(caSecret(options.secret, ca));
      return 0;
    }
    case "issue": {
      const ca = readCa(options.dir);
      const docs: string[] = [];
      for (const host of options.hosts) {
        const leaf = issueLeaf(ca.current, { host, hours: options.hours, now });
        if (options.out) io.err(`gearbox ca: ${host} → ${writeLeaf(options.out, host, leaf, stamp(now))}\n`);
        if (options.secretNamespace) docs.push(leafSecret({ namespace: options.secretNamespace, name: leafSecretName(host) }, host, leaf));
      }
      if (docs.length > 0) io.out(docs.join("---\n"));
      return 0;
    }
    case "rotate":
      return rotate(options, io, now);
    case "bundle": {
      const bundle = bundleOf(readCa(options.dir));
      if (!options.configMap) {
        io.out(bundle);
        return 0;
      }
      const system = rootCertificates.join("\n") + "\n";
      io.out(bundleConfigMap(options.configMap, { "gearbox-ca.crt": bundle, "ca-bundle.crt": system + bundle }));
      return 0;
    }
    default: {
      const never: never = options.verb;
      throw new Error(`unhandled verb ${String(never)}`);
    }
  }
}

function rotate(options: CaOptions, io: CliIo, now: Date): number {
  const ca = readCa(options.dir);
  if (options.rotateCa) {
    const next: CaDirectory = { current: createCa({ hosts: options.permit, days: options.days, now }), previousCertPem: ca.current.certPem };
    writeCa(options.dir, next);
    io.err(
      `gearbox ca: new CA in ${options.dir}; the previous one stays in ${CA_FILES.bundle} until 'rotate --retire-previous'. ` +
        `Roll the bundle out to workloads before reissuing leaves.\n`,
    );
    if (options.secret) io.out(caSecret(options.secret, next));
    return 0;
  }
  if (options.retirePrevious) {
    const next: CaDirectory = { current: ca.current, previousCertPem: undefined };
    writeCa(options.dir, next);
    io.err(`gearbox ca: ${CA_FILES.bundle} now holds the current CA only\n`);
    if (options.secret) io.out(caSecret(options.secret, next));
    return 0;
  }
  const out = options.out ?? "";
  for (const host of options.hosts) {
    const reason = staleReason(readLeaf(out, host), ca.current, host, options.renewWithinHours, now);
    if (reason === undefined) {
      io.out(`kept ${host}\n`);
      continue;
    }
    writeLeaf(out, host, issueLeaf(ca.current, { host, hours: options.hours, now }), stamp(now));
    io.out(`rotated ${host} (${reason})\n`);
  }
  return 0;
}

/** `gearbox ca …`: exit 0, 1 (a failure, one line on stderr) or 2 (usage). */
export function runCa(args: string[], io: CliIo): number {
  const parsed = parseOrExit("ca", args, CA_USAGE, io, parseCaArgs);
  if ("exit" in parsed) return parsed.exit;
  try {
    return runCaVerb(parsed.options, io);
  } catch (err) {
    io.err(`gearbox ca ${parsed.options.verb}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
