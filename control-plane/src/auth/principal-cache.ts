/**
 * A short-lived, bounded cache of authenticated principals, keyed by the credential.
 *
 * Why: verifying a token and re-reading its user on every request costs more than the rest of a
 * typical read; the API's latency targets need that off the hot path.
 * Bounds: an entry lives at most `ttlMs` (and never past the credential's own expiry), and at most
 * `maxEntries` are kept (the oldest go first). Any change to users or API keys on this instance
 * clears the cache, so deactivation, deletion and role changes apply at once here; other replicas
 * see them within `ttlMs`.
 */
import type { Clock } from "@lakesmith/shared";
import type { Principal } from "./access.ts";

interface Entry {
  principal: Principal;
  expiresAt: number;
}

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(credential: string): Principal | undefined {
    const entry = this.entries.get(credential);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.entries.delete(credential);
      return undefined;
    }
    return entry.principal;
  }

  /** Remembers a principal until the sooner of the TTL and `credentialExpiresAt`. */
  set(credential: string, principal: Principal, credentialExpiresAt?: number): void {
    if (this.ttlMs <= 0) return;
    const expiresAt = Math.min(
      this.clock.now().getTime() + this.ttlMs,
      credentialExpiresAt ?? Number.POSITIVE_INFINITY,
    );
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(credential, { principal, expiresAt });
  }

  clear(): void {
    this.entries.clear();
  }
}
