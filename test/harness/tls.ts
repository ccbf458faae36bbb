/**
 * TLS at the hop, as the intercepting Envoy has it (envoy/sidecar-https.yaml):
 *
 * - Downstream: the `tls_inspector` listener filter reads the ClientHello's SNI and picks the
 *   filter chain whose `filter_chain_match.server_names` lists it; each chain's
 *   `DownstreamTlsContext` serves the leaf of that host, loaded from an SDS file-based config
 *   (`tls.crt`/`tls.key` in a directory, `watched_directory` on it). No chain matches → Envoy
 *   closes the connection (`no_filter_chain_match`, listener_impl / filter_chain_manager_impl.cc):
 *   a ClientHello for another host, or without SNI (no default certificate), gets none at all. When a move
 *   happens in the watched directory (the `..data` symlink swap of a mounted Secret or of
 *   `gearbox ca rotate`) Envoy reloads the secret: new handshakes get the new leaf, connections
 *   already open keep theirs (envoy/api/envoy/config/core/v3/base.proto `WatchedDirectory`;
 *   source/common/secret/sds_api.cc).
 * - Upstream: `UpstreamTlsContext` with `trusted_ca` and `auto_san_validation`: the provider's
 *   certificate must chain to the trusted CAs and name the SNI host; a failed handshake is an
 *   upstream connection failure (503 local reply, router.cc / `UF` flag).
 */
import { readFileSync, watch, type FSWatcher } from "node:fs";
import path from "node:path";
import tls from "node:tls";

/** SNI → the directory with that host's `tls.crt` and `tls.key`. */
export interface DownstreamTlsOptions {
  serverNames: Record<string, { directory: string }>;
}

/** `UpstreamTlsContext`: SNI (also the name checked) and the trusted CA bundle (PEM). */
export interface UpstreamTlsOptions {
  sni: string;
  trustedCa: string;
}

export interface DownstreamTlsCounters {
  /** `listener.<name>.no_filter_chain_match` */
  noFilterChainMatch: number;
  /** Secret reloads after a move in a watched directory (SDS `update_success`). */
  secretReloads: number;
}

/** The listener side: a `SNICallback` over per-host secure contexts, reloaded on directory moves. */
export class DownstreamTls {
  private readonly contexts = new Map<string, tls.SecureContext>();
  private readonly watchers: FSWatcher[] = [];
  readonly counters: DownstreamTlsCounters = { noFilterChainMatch: 0, secretReloads: 0 };

  constructor(options: DownstreamTlsOptions) {
    for (const [name, { directory }] of Object.entries(options.serverNames)) {
      this.contexts.set(name.toLowerCase(), load(directory));
      // A failed reload (a half-written directory) keeps the last good secret, as SDS does.
      const watcher = watch(directory, () => {
        try {
          this.contexts.set(name.toLowerCase(), load(directory));
          this.counters.secretReloads += 1;
        } catch {
          /* keep the previous secret */
        }
      });
      this.watchers.push(watcher);
    }
  }

  /** Options for `https.createServer`. */
  serverOptions(): tls.TlsOptions {
    return {
      SNICallback: (servername, callback) => {
        const context = this.contexts.get(servername.toLowerCase());
        if (context === undefined) {
          this.counters.noFilterChainMatch += 1;
          callback(new Error(`no filter chain matches server name '${servername}'`), undefined);
          return;
        }
        callback(null, context);
      },
      // HTTP/1.1 only: the harness's codec (Envoy would offer h2 by ALPN when codec_type AUTO).
      ALPNProtocols: ["http/1.1"],
    };
  }

  close(): void {
    for (const w of this.watchers) w.close();
  }
}

function load(directory: string): tls.SecureContext {
  return tls.createSecureContext({
    cert: readFileSync(path.join(directory, "tls.crt")),
    key: readFileSync(path.join(directory, "tls.key")),
  });
}

/** Envoy's words for an upstream TLS failure in the 503 body (`transport failure reason`). */
export function upstreamTlsFailure(error: NodeJS.ErrnoException): string | undefined {
  const code = error.code ?? "";
  const tlsCodes = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_)/;
  return tlsCodes.test(code) ? `TLS_error: ${code}` : undefined;
}
