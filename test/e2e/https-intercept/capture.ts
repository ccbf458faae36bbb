/**
 * `--import` preload for the SDK child processes: what the mesh's traffic capture does for a pod,
 * done inside one process. Istio's DNS proxy answers the intercepted provider hosts, and
 * iptables REDIRECTs their port 443 to the proxy's listener; here `dns.lookup` answers
 * 127.0.0.1 for those hosts and `tls.connect` to <host>:443 goes to the harness's port. Nothing
 * else changes: the SDK still sends SNI = host and verifies the certificate against the
 * runtime's trust store (plus NODE_EXTRA_CA_CERTS), as it would in the pod.
 *
 * GEARBOX_TEST_CAPTURE_HOSTS: comma-separated host names; GEARBOX_TEST_CAPTURE_PORT: the port.
 */
import dns from "node:dns";
import tls from "node:tls";

const hosts = new Set((process.env.GEARBOX_TEST_CAPTURE_HOSTS ?? "").split(",").filter(Boolean));
const port = Number(process.env.GEARBOX_TEST_CAPTURE_PORT);
if (hosts.size === 0 || !Number.isInteger(port)) throw new Error("capture preload: GEARBOX_TEST_CAPTURE_HOSTS and GEARBOX_TEST_CAPTURE_PORT are required");

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
const originalLookup = dns.lookup.bind(dns) as (hostname: string, options: unknown, callback: LookupCallback) => void;
function capturedLookup(hostname: string, options: unknown, callback?: unknown): void {
  const cb = (typeof options === "function" ? options : callback) as LookupCallback;
  const opts = (typeof options === "function" ? {} : (options ?? {})) as dns.LookupOptions | number;
  if (!hosts.has(hostname)) {
    originalLookup(hostname, opts, cb);
    return;
  }
  const all = typeof opts === "object" && opts.all === true;
  process.nextTick(() => (all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4)));
}
(dns as { lookup: unknown }).lookup = capturedLookup;

const originalConnect = tls.connect.bind(tls) as (...args: unknown[]) => tls.TLSSocket;
(tls as { connect: unknown }).connect = (...args: unknown[]): tls.TLSSocket => {
  const options = args[0];
  if (typeof options === "object" && options !== null) {
    const o = options as tls.ConnectionOptions;
    const host = o.servername ?? o.host ?? "";
    if (hosts.has(host) && Number(o.port ?? 443) === 443) {
      // The name the client dialled stays the SNI and the name it checks (as after iptables).
      args[0] = { ...o, host: "127.0.0.1", port, servername: host, lookup: undefined };
    }
  }
  return originalConnect(...args);
};
