/**
 * Kubernetes manifests `gearbox ca` prints for `kubectl apply -f -`: the CA Secret (key
 * included, for the `gearbox` namespace only), a leaf's TLS Secret (for an app namespace,
 * where istio/components/trust mounts it into istio-proxy), and the public CA bundle ConfigMap
 * that the same component mounts into app containers.
 */
import { stringify } from "yaml";
import type { KeyPair } from "./authority.ts";
import { CA_FILES, bundleOf, type CaDirectory } from "./files.ts";

export interface ObjectRef {
  namespace: string;
  name: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `namespace/name` → a reference, or a message naming what is wrong. */
export function parseRef(text: string): ObjectRef | string {
  const [namespace, name, ...rest] = text.split("/");
  if (rest.length > 0 || !namespace || !name || !DNS_LABEL.test(namespace) || !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
    return `'${text}' is not <namespace>/<name> (lower-case DNS names)`;
  return { namespace, name };
}

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const labels = { "app.kubernetes.io/part-of": "gearbox", "app.kubernetes.io/component": "ca" };

/** The CA, key included: keep it in `gearbox`, where no app pod runs and nothing mounts it. */
export function caSecret(ref: ObjectRef, ca: CaDirectory): string {
  const data: Record<string, string> = {
    [CA_FILES.cert]: b64(ca.current.certPem),
    [CA_FILES.key]: b64(ca.current.keyPem),
    [CA_FILES.bundle]: b64(bundleOf(ca)),
  };
  if (ca.previousCertPem) data[CA_FILES.previous] = b64(ca.previousCertPem);
  return stringify({ apiVersion: "v1", kind: "Secret", metadata: { ...ref, labels }, type: "Opaque", data });
}

/** A leaf as a `kubernetes.io/tls` Secret (what a Secret volume mounts as tls.crt / tls.key, as the SDS files name them). */
export function leafSecret(ref: ObjectRef, host: string, leaf: KeyPair): string {
  return stringify({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { ...ref, labels: { ...labels, "gearbox.dev/intercept-host": host } },
    type: "kubernetes.io/tls",
    data: { "tls.crt": b64(leaf.certPem), "tls.key": b64(leaf.keyPem) },
  });
}

/** Public certificates only: what opted-in app pods mount (see istio/components/ca-trust). */
export function bundleConfigMap(ref: ObjectRef, files: Record<string, string>): string {
  return stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { ...ref, labels }, data: files });
}
