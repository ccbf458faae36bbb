/**
 * One state-of-the-world ADS stream (`StreamAggregatedResources`).
 *
 * Per type URL the stream keeps the subscription, the nonce and version of the last response,
 * and whether that response is still unanswered. The protocol, as Envoy and gRPC clients
 * speak it:
 *
 * - a request whose `response_nonce` is not the last one sent for its type is stale and ignored
 *   (the client sends a fresh one once it has seen the latest response);
 * - otherwise it answers the last response: an ACK (`version_info` = the version applied) or a
 *   NACK (`error_detail` set, `version_info` = the previous good version): the error is logged
 *   and what was refused is not sent again, only a snapshot that changes it;
 * - a response holds every subscribed resource of its type (all of them for a wildcard); it is
 *   sent when that set differs from what the last response carried (another subscription, or
 *   a resource of the set changed: a snapshot that changes only endpoints sends no clusters),
 *   and only once the previous response of that type is answered;
 * - versions never go backwards for a stream: when the snapshot to send is older than what the
 *   client has (it reconnects with a version an earlier control plane issued under a clock
 *   running ahead, or its group got a snapshot built before the default one it had), the cache
 *   re-issues the current resources under a higher version and that is sent, with a warning;
 * - a client resuming with exactly the current version on a wildcard subscription already has
 *   everything and gets nothing until the next change.
 */
import type { AnyMessage } from "../../common/control-plane/protos.ts";
import type { Snapshot } from "../cache/snapshot.ts";
import { compareVersions } from "../cache/version.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "./messages.ts";
import { AdsStream, pushOrder } from "./stream.ts";
import { Subscription } from "./subscription.ts";

interface TypeState {
  readonly subscription: Subscription;
  /** Nonce of the last response ("" before the first). */
  nonce: string;
  /** The last response has not been answered yet. */
  awaitingAnswer: boolean;
  /** Version of the last response, or the one the client resumed with. */
  version: string | undefined;
  /** What the last response held: equal keys, equal resources (see `selectionKey`). */
  selection: string | undefined;
}

export class SotwStream extends AdsStream<DiscoveryRequest, DiscoveryResponse> {
  private readonly types = new Map<string, TypeState>();

  protected onRequest(typeUrl: string, request: DiscoveryRequest): void {
    const nonce = request.response_nonce ?? "";
    let state = this.types.get(typeUrl);
    const first = state === undefined;
    if (state === undefined) {
      state = { subscription: new Subscription(), nonce: "", awaitingAnswer: false, version: undefined, selection: undefined };
      this.types.set(typeUrl, state);
    } else if (nonce !== state.nonce) {
      this.logger.debug({ type_url: typeUrl, nonce, expected: state.nonce }, "stale ADS request ignored");
      return;
    }
    state.subscription.applySotw(request.resource_names ?? [], first);
    if (!first) this.answer(typeUrl, state, request);
    state.awaitingAnswer = false;
    const reported = request.version_info ?? "";
    if (first && reported !== "") {
      state.version = reported;
      const current = this.snapshot();
      if (current !== undefined && reported === current.version && state.subscription.wildcard) {
        // The client resumes with exactly this version of everything: nothing to send.
        state.selection = selectionKey(current, typeUrl, state.subscription);
        return;
      }
    }
    this.respond(typeUrl, state);
  }

  protected onSnapshot(_snapshot: Snapshot): void {
    for (const typeUrl of pushOrder(this.types.keys())) {
      const state = this.types.get(typeUrl);
      if (state) this.respond(typeUrl, state);
    }
  }

  /** Records the client's ACK or NACK of the last response. */
  private answer(typeUrl: string, state: TypeState, request: DiscoveryRequest): void {
    if (!state.awaitingAnswer) return;
    if (request.error_detail) {
      this.deps.stats.nacks++;
      this.logger.warn(
        {
          type_url: typeUrl,
          rejected_version: state.version,
          kept_version: request.version_info ?? "",
          error: request.error_detail.message ?? "",
          code: request.error_detail.code ?? 0,
        },
        "ADS client refused a response (NACK)",
      );
    } else {
      this.deps.stats.acks++;
      this.logger.debug({ type_url: typeUrl, version: request.version_info ?? "" }, "ADS ACK");
    }
  }

  private respond(typeUrl: string, state: TypeState): void {
    if (state.awaitingAnswer) return;
    const snapshot = this.snapshot();
    if (snapshot === undefined) return;
    if (state.version !== undefined && (compareVersions(snapshot.version, state.version) ?? 0) < 0) {
      this.logger.warn(
        { type_url: typeUrl, client_version: state.version, snapshot_version: snapshot.version },
        "ADS client has a version newer than the snapshot (an earlier control plane's clock ran ahead?); re-issuing the current resources above it",
      );
      // The cache notifies this stream's watch, which sends the re-issued snapshot.
      this.deps.cache.advancePast(this.group(), state.version);
      return;
    }
    const selection = selectionKey(snapshot, typeUrl, state.subscription);
    if (state.selection === selection) return;
    const nonce = this.nextNonce();
    state.nonce = nonce;
    state.awaitingAnswer = true;
    state.version = snapshot.version;
    state.selection = selection;
    this.send({ version_info: snapshot.version, resources: selected(snapshot, typeUrl, state.subscription), type_url: typeUrl, nonce });
  }
}

/** Identifies the resources a response for `subscription` holds, by name and resource version. */
function selectionKey(snapshot: Snapshot, typeUrl: string, subscription: Subscription): string {
  if (subscription.wildcard) return `*${snapshot.typeVersions.get(typeUrl) ?? ""}`;
  const versions = snapshot.resourceVersions.get(typeUrl);
  return [...subscription.names]
    .sort()
    .map((name) => `${name}=${versions?.get(name) ?? ""}`)
    .join(",");
}

function selected(snapshot: Snapshot, typeUrl: string, subscription: Subscription): AnyMessage[] {
  const all = snapshot.resources.get(typeUrl);
  if (all === undefined) return [];
  if (subscription.wildcard) return [...all.values()];
  const out: AnyMessage[] = [];
  for (const name of subscription.names) {
    const resource = all.get(name);
    if (resource !== undefined) out.push(resource);
  }
  return out;
}
