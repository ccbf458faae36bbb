/**
 * The Gearbox CA: a root that signs short-lived leaf certificates for the provider hosts a mesh
 * intercepts (api.openai.com…), so a sidecar or gateway can terminate the apps' TLS and hand
 * the plain request to ext_proc.
 *
 * Keys come from Node's crypto (RSA; 3072 bits for the CA, 2048 for leaves); node-forge builds
 * and signs the certificates, which Node's crypto cannot do. The CA carries a critical
 * nameConstraints extension (RFC 5280 §4.2.1.10) permitting only the hosts given at `init`:
 * OpenSSL, BoringSSL and Node refuse a leaf it signed for any other name, so a leaked CA key
 * cannot impersonate the rest of the Internet to the workloads that trust it.
 */
import { generateKeyPairSync, randomBytes, X509Certificate } from "node:crypto";
import forge from "node-forge";

const { pki, asn1 } = forge;

/** A certificate and its private key, both PEM. */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CaOptions {
  /** Host names the CA may sign for (nameConstraints permittedSubtrees, dNSName). */
  hosts: readonly string[];
  /** Validity in days. */
  days: number;
  commonName?: string;
  now?: Date;
}

export interface LeafOptions {
  host: string;
  /** Validity in hours. */
  hours: number;
  now?: Date;
}

const HOST_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Why `host` is not a host name the CA handles (lower-case DNS name, no wildcard), or undefined. */
export function hostProblem(host: string): string | undefined {
  return HOST_RE.test(host) ? undefined : `'${host}' is not a lower-case DNS host name (no wildcard, no port)`;
}

function rsaKey(bits: number): { forgeKey: forge.pki.rsa.PrivateKey; forgePublic: forge.pki.rsa.PublicKey; keyPem: string } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: bits });
  const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const forgeKey = pki.privateKeyFromPem(keyPem);
  return { forgeKey, forgePublic: pki.setRsaPublicKey(forgeKey.n, forgeKey.e), keyPem };
}

/** A positive 128-bit serial (RFC 5280 §4.1.2.2: at most 20 octets, non-negative). */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString("hex");
}

/** nameConstraints value: permittedSubtrees [0] of GeneralSubtree { base dNSName [2] }. */
function permittedDns(hosts: readonly string[]): forge.asn1.Asn1 {
  const subtrees = hosts.map((h) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [asn1.create(asn1.Class.CONTEXT_SPECIFIC, 2, false, h)]));
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, subtrees)]);
}

/** A new self-signed CA, limited to `hosts`. */
export function createCa(options: CaOptions): KeyPair {
  for (const h of options.hosts) {
    const problem = hostProblem(h);
    if (problem) throw new Error(problem);
  }
  if (options.hosts.length === 0) throw new Error("a CA needs at least one host to sign for");
  const now = options.now ?? new Date();
  const key = rsaKey(3072);
  const cert = pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = serial();
  // Back-dated a little: a node whose clock is a few minutes behind still accepts it.
  cert.validity.notBefore = new Date(now.getTime() - 5 * 60_000);
  cert.validity.notAfter = new Date(now.getTime() + options.days * 86_400_000);
  const subject = [
    { name: "commonName", value: options.commonName ?? "Gearbox interception CA" },
    { name: "organizationName", value: "Gearbox" },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
    { id: "2.5.29.30", critical: true, value: permittedDns(options.hosts) },
  ]);
  cert.sign(key.forgeKey, forge.md.sha256.create());
  return { certPem: pki.certificateToPem(cert).replaceAll("\r\n", "\n"), keyPem: key.keyPem };
}

/** A leaf for one host (SAN dNSName, serverAuth), signed by `ca`. */
export function issueLeaf(ca: KeyPair, options: LeafOptions): KeyPair {
  const problem = hostProblem(options.host);
  if (problem) throw new Error(problem);
  const caInfo = describeCertificate(ca.certPem);
  if (!caInfo.permittedHosts.includes(options.host))
    throw new Error(`the CA may only sign for ${caInfo.permittedHosts.join(", ")}, not ${options.host} (gearbox ca rotate --ca --hosts …)`);
  const now = options.now ?? new Date();
  const notAfter = new Date(now.getTime() + options.hours * 3_600_000);
  if (notAfter > caInfo.notAfter) throw new Error(`the leaf would outlive the CA (CA expires ${caInfo.notAfter.toISOString()})`);
  return signLeaf(ca, { host: options.host, notBefore: new Date(now.getTime() - 5 * 60_000), notAfter });
}

/**
 * Signs a leaf for `host` with no policy check (the CA's own hosts, its expiry). Only
 * `issueLeaf` and tests (expired and out-of-constraint certificates that clients must refuse)
 * call it.
 */
export function signLeaf(ca: KeyPair, options: { host: string; notBefore: Date; notAfter: Date }): KeyPair {
  const caCert = pki.certificateFromPem(ca.certPem);
  const caKey = pki.privateKeyFromPem(ca.keyPem);
  const key = rsaKey(2048);
  const cert = pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = serial();
  cert.validity.notBefore = options.notBefore;
  cert.validity.notAfter = options.notAfter;
  cert.setSubject([{ name: "commonName", value: options.host }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: [{ type: 2, value: options.host }] },
    { name: "subjectKeyIdentifier" },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: pki.certificateToPem(cert).replaceAll("\r\n", "\n"), keyPem: key.keyPem };
}

export interface CertificateInfo {
  subject: string;
  notBefore: Date;
  notAfter: Date;
  fingerprint256: string;
  /** dNSName SANs (leaf). */
  dnsNames: string[];
  /** nameConstraints permitted dNSNames (CA); empty for a leaf. */
  permittedHosts: string[];
  isCa: boolean;
}

/** What a PEM certificate says, read with Node's own parser (and forge for nameConstraints). */
export function describeCertificate(pem: string): CertificateInfo {
  const x = new X509Certificate(pem);
  const dnsNames = (x.subjectAltName ?? "")
    .split(", ")
    .filter((s) => s.startsWith("DNS:"))
    .map((s) => s.slice(4));
  const permittedHosts: string[] = [];
  const ext = pki.certificateFromPem(pem).getExtension("nameConstraints") as { value?: string } | null;
  if (ext?.value) {
    const outer = asn1.fromDer(ext.value);
    for (const tagged of outer.value as forge.asn1.Asn1[])
      if ((tagged.type as number) === 0)
        // [0] permittedSubtrees
        for (const subtree of tagged.value as forge.asn1.Asn1[])
          for (const base of subtree.value as forge.asn1.Asn1[]) if ((base.type as number) === 2) permittedHosts.push(base.value as string);
  }
  return {
    subject: x.subject,
    notBefore: new Date(x.validFrom),
    notAfter: new Date(x.validTo),
    fingerprint256: x.fingerprint256,
    dnsNames,
    permittedHosts,
    isCa: x.ca,
  };
}

/** Does `leafPem` chain to `caPem` (signature and issuer), checked with Node's parser? */
export function signedBy(leafPem: string, caPem: string): boolean {
  const leaf = new X509Certificate(leafPem);
  const ca = new X509Certificate(caPem);
  return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
}
