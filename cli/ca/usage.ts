export const CA_USAGE = `usage: gearbox ca init   --dir <ca dir> [--hosts h1,h2,…] [--days 1825] [--secret <ns>/<name>] [--force]
       gearbox ca issue  --dir <ca dir> --host <host> [--host …] [--hours 48] (--out <dir> | --secret-namespace <ns>)
       gearbox ca rotate --dir <ca dir> --host <host> [--host …] [--hours 48] [--renew-within 16] --out <dir>
       gearbox ca rotate --dir <ca dir> --ca [--hosts h1,h2,…] [--days 1825] [--secret <ns>/<name>]
       gearbox ca rotate --dir <ca dir> --retire-previous [--secret <ns>/<name>]
       gearbox ca bundle --dir <ca dir> [--configmap <ns>/<name>]

The CA Gearbox uses to terminate apps' HTTPS calls to provider hosts (opt-in per host), so
https://api.openai.com reaches ext_proc without an app change.
  init     a new CA (RSA 3072, SHA-256) that may only sign for --hosts (a critical nameConstraints
           extension; default api.openai.com, api.anthropic.com, generativelanguage.googleapis.com),
           written to --dir (ca.key mode 0600, ca.crt, bundle.crt). --secret also prints it as a Secret
           manifest: apply it to the gearbox namespace, which no app pod can read
  issue    one short-lived leaf per --host (RSA 2048, SAN = host, serverAuth; default 48 hours), into
           --out/<host>/tls.crt|tls.key (one atomic symlink swap, as Envoy's SDS watched_directory and a
           mounted Secret expect), or printed as kubernetes.io/tls Secrets gearbox-intercept-<host, dots as
           dashes> in --secret-namespace (an app namespace: istio/components/trust mounts them into its
           pods' istio-proxy only; re-run and apply on a schedule shorter than --hours to rotate)
  rotate   reissues each --host leaf under --out that is missing, expires within --renew-within hours
           (default a third of --hours) or was not signed by the current CA; keeps the others. Run it
           more often than that window (a cron); connections open on the old leaf keep working.
           --ca: a new CA; the old certificate stays in bundle.crt (trusted) until --retire-previous,
           so roll the bundle out, rotate the leaves, then retire
  bundle   the PEM bundle workloads must trust, on stdout; --configmap prints it as the ConfigMap that
           istio/components/trust mounts (name it <app ns>/gearbox-ca-bundle): gearbox-ca.crt, the bundle;
           ca-bundle.crt, Node's Mozilla roots + the bundle, for SSL_CERT_FILE / REQUESTS_CA_BUNDLE,
           which replace the system roots instead of adding
Exit 0 done, 1 failed (unreadable CA, host not permitted), 2 wrong usage.
`;
