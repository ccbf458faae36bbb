/**
 * One delta (incremental) ADS stream (`DeltaAggregatedResources`).
 *
 * Per type URL the stream tracks the subscription and what the client holds: resource name →
 * version (a hash of the resource's bytes), or null for "told it does not exist". Each response
 * carries only the difference between the snapshot and that:
 *
 * - resources whose version differs (new or changed) in `resources`, each with its version;
 * - names the client holds that are gone, and subscribed names that do not exist, in
 *   `removed_resources` (the spec's way of saying "does not exist");
 * - nothing at all when nothing differs.
 *
 * The first request of a type may carry `initial_resource_versions` (a reconnecting client):
 * what matches the snapshot is not sent again. Subscribing to a name later always sends it
 * (the client may have dropped it). Subscription changes apply whatever the nonce; the
 * `response_nonce` only says which response is ACKed (or NACKed, with `error_detail`: logged,
 * and what was refused is not sent again until it changes). As in state of the world, a type
 * has at most one unanswered response.
 */
import type { Snapshot } from "../cache/snapshot.ts";
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse, DeltaResource } from "./messages.ts";
import { AdsStream, pushOrder } from "./stream.ts";
import { Subscription, WILDCARD } from "./subscription.ts";

interface TypeState {
  readonly subscription: Subscription;
  /** Name → the version the client holds, or null when it was told the resource does not exist. */
  readonly known: Map<string, string | null>;
  nonce: string;
  awaitingAnswer: boolean;
}

const NO_VERSIONS: ReadonlyMap<string, string> = new Map();

export class DeltaStream extends AdsStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse> {
  private readonly types = new Map<string, TypeState>();

  protected onRequest(typeUrl: string, request: DeltaDiscoveryRequest): void {
    const subscribe = request.resource_names_subscribe ?? [];
    const unsubscribe = request.resource_names_unsubscribe ?? [];
    let state = this.types.get(typeUrl);
    const first = state === undefined;
    if (state === undefined) {
      state = { subscription: new Subscription(), known: new Map(Object.entries(request.initial_resource_versions ?? {})), nonce: "", awaitingAnswer: false };
      this.types.set(typeUrl, state);
    } else {
      for (const name of subscribe) if (name !== WILDCARD) state.known.delete(name);
    }
    state.subscription.applyDelta(subscribe, unsubscribe, first);
    for (const name of unsubscribe) if (!state.subscription.covers(name)) state.known.delete(name);
    const nonce = request.response_nonce ?? "";
    if (nonce !== "") this.answer(typeUrl, state, nonce, request);
    this.respond(typeUrl, state);
  }

  protected onSnapshot(_snapshot: Snapshot): void {
    for (const typeUrl of pushOrder(this.types.keys())) {
      const state = this.types.get(typeUrl);
      if (state) this.respond(typeUrl, state);
    }
  }

  private answer(typeUrl: string, state: TypeState, nonce: string, request: DeltaDiscoveryRequest): void {
    if (!state.awaitingAnswer || nonce !== state.nonce) {
      this.logger.debug({ type_url: typeUrl, nonce, expected: state.nonce }, "stale delta ACK/NACK ignored");
      return;
    }
    state.awaitingAnswer = false;
    if (request.error_detail) {
      this.deps.stats.nacks++;
      this.logger.warn(
        { type_url: typeUrl, nonce, error: request.error_detail.message ?? "", code: request.error_detail.code ?? 0 },
        "delta ADS client refused a response (NACK)",
      );
    } else {
      this.deps.stats.acks++;
      this.logger.debug({ type_url: typeUrl, nonce }, "delta ADS ACK");
    }
  }

  private respond(typeUrl: string, state: TypeState): void {
    if (state.awaitingAnswer) return;
    const snapshot = this.snapshot();
    if (snapshot === undefined) return;
    const versions = snapshot.resourceVersions.get(typeUrl) ?? NO_VERSIONS;
    const resources = snapshot.resources.get(typeUrl);
    const { subscription, known } = state;
    const changed: DeltaResource[] = [];
    const removed: string[] = [];
    const wanted = subscription.wildcard ? new Set([...versions.keys(), ...subscription.names]) : subscription.names;
    for (const name of wanted) {
      const version = versions.get(name);
      const resource = resources?.get(name);
      if (version !== undefined && resource !== undefined) {
        if (known.get(name) !== version) changed.push({ name, version, resource });
        known.set(name, version);
      } else if (known.get(name) !== null) {
        removed.push(name);
        known.set(name, null);
      }
    }
    for (const [name, version] of known) {
      if (wanted.has(name)) continue;
      if (version !== null) removed.push(name);
      known.delete(name);
    }
    if (changed.length === 0 && removed.length === 0) return;
    state.nonce = this.nextNonce();
    state.awaitingAnswer = true;
    this.send({ system_version_info: snapshot.version, resources: changed, type_url: typeUrl, removed_resources: removed, nonce: state.nonce });
  }
}
