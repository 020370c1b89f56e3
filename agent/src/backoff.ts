/**
 * Retry delays, exponential with jitter: for reconnects to the control plane (a thousand agents that
 * lost the same plane don't all knock at the same moment) and for object-store retries
 * (`store/retry.ts`). Attempt n waits a random time in [cap/2, cap], where
 * cap = min(maxMs, baseMs * 2^n): never less than half the bound (no hot loop against a server that
 * refuses at once), spread over the other half.
 *
 * @example const b = new Backoff(200, 15_000); b.next(); b.next(); b.reset();
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt; each call doubles the bound up to `maxMs`. */
  next(): number {
    const cap = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(cap / 2 + this.random() * (cap / 2));
  }

  /** A connection held: the next failure starts from the base again. */
  reset(): void {
    this.attempt = 0;
  }
}
