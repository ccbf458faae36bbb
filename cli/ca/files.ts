/**
 * Where `gearbox ca` keeps things on disk.
 *
 * CA directory (`--dir`, the same keys as the `gearbox-ca` Secret, so a mounted Secret is a CA
 * directory): `ca.crt`, `ca.key` (mode 0600), `bundle.crt` (every CA workloads must trust: the
 * current one, plus the previous one during a CA rotation), `previous.crt`.
 *
 * Leaf directory (`--out`): one folder per host, laid out as Kubernetes' atomic writer lays out
 * a mounted Secret and as Envoy's SDS `watched_directory` expects: `<host>/..<stamp>/tls.crt`,
 * `tls.key`; `<host>/..data` a symlink to the current stamp, swapped with one rename; and
 * `<host>/tls.crt` → `..data/tls.crt`. A reader never sees a new certificate with an old key.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { KeyPair } from "./authority.ts";

export const CA_FILES = { cert: "ca.crt", key: "ca.key", bundle: "bundle.crt", previous: "previous.crt" } as const;

export interface CaDirectory {
  current: KeyPair;
  previousCertPem: string | undefined;
}

export function readCa(dir: string): CaDirectory {
  const file = (name: string) => path.join(dir, name);
  if (!existsSync(file(CA_FILES.cert)) || !existsSync(file(CA_FILES.key)))
    throw new Error(`${dir} holds no CA (${CA_FILES.cert} and ${CA_FILES.key}): run 'gearbox ca init --dir ${dir}' first`);
  return {
    current: { certPem: readFileSync(file(CA_FILES.cert), "utf8"), keyPem: readFileSync(file(CA_FILES.key), "utf8") },
    previousCertPem: existsSync(file(CA_FILES.previous)) ? readFileSync(file(CA_FILES.previous), "utf8") : undefined,
  };
}

/** The PEMs workloads trust: the current CA, then the previous one if any. */
export function bundleOf(ca: CaDirectory): string {
  return ca.current.certPem + (ca.previousCertPem ?? "");
}

/** Writes each file through a temporary name and a rename (a reader sees old or new, whole). */
export function writeCa(dir: string, ca: CaDirectory): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const put = (name: string, text: string, mode: number) => {
    const tmp = path.join(dir, `.${name}.tmp`);
    writeFileSync(tmp, text, { mode });
    renameSync(tmp, path.join(dir, name));
  };
  put(CA_FILES.key, ca.current.keyPem, 0o600);
  put(CA_FILES.cert, ca.current.certPem, 0o644);
  if (ca.previousCertPem) put(CA_FILES.previous, ca.previousCertPem, 0o644);
  else rmSync(path.join(dir, CA_FILES.previous), { force: true });
  put(CA_FILES.bundle, bundleOf(ca), 0o644);
}

/** The leaf currently published for `host` under `out`, if any. */
export function readLeaf(out: string, host: string): KeyPair | undefined {
  const dir = path.join(out, host);
  try {
    return { certPem: readFileSync(path.join(dir, "tls.crt"), "utf8"), keyPem: readFileSync(path.join(dir, "tls.key"), "utf8") };
  } catch {
    return undefined;
  }
}

/** Publishes a leaf for `host` under `out` with one atomic symlink swap; keeps the previous stamp. */
export function writeLeaf(out: string, host: string, leaf: KeyPair, stamp: string): string {
  const dir = path.join(out, host);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const versioned = `..${stamp}`;
  const target = path.join(dir, versioned);
  mkdirSync(target, { mode: 0o750 });
  writeFileSync(path.join(target, "tls.crt"), leaf.certPem, { mode: 0o644 });
  writeFileSync(path.join(target, "tls.key"), leaf.keyPem, { mode: 0o600 });
  const tmpLink = path.join(dir, "..data_tmp");
  rmSync(tmpLink, { force: true });
  symlinkSync(versioned, tmpLink);
  renameSync(tmpLink, path.join(dir, "..data"));
  for (const name of ["tls.crt", "tls.key"]) if (!existsSync(path.join(dir, name))) symlinkSync(path.join("..data", name), path.join(dir, name));
  // Keep the stamp just replaced (a reader may still be opening it); drop older ones.
  const stamps = readdirSync(dir)
    .filter((n) => n.startsWith("..") && n !== "..data" && n !== "..data_tmp")
    .sort();
  for (const old of stamps.slice(0, -2)) rmSync(path.join(dir, old), { recursive: true, force: true });
  return dir;
}
