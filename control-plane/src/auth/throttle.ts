/**
 * Throttles password logins (`POST /api/v1/auth/login`) per client and per account at a client.
 *
 * - Each attempt counts against two counters: its client address (limit `login_failures_per_client`)
 *   and the account at that address (limit `login_failures_per_account`). They live in the
 *   `login_throttle` table, so every Node process, Workers isolate and replica sees the same counts.
 * - An attempt is counted before its password is checked, by one conditional upsert per counter, so
 *   concurrent guesses cannot all start before the first failure is written. A success deletes both
 *   counters: a client that logs in starts again from zero.
 * - The attempt that brings a counter to its limit starts a 429 period of 1 s, each further one
 *   doubles it, up to `login_lockout_max_seconds`. Attempts during the period are refused with 429
 *   and `Retry-After` before any password check, and are not counted.
 * - Counters are per client, so failures from elsewhere never lock an account (the break-glass admin
 *   included) out for anyone else; clients behind one NAT or untrusted proxy share an address.
 * - A counter is forgotten `login_failure_window_seconds` after its last attempt, or after its 429
 *   period if later. Every failed login deletes the forgotten rows, so the table only holds live ones.
 */
import type { Clock } from "@lakesmith/shared";
import { and, gt, inArray, lte, or, sql } from "drizzle-orm";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { loginThrottle } from "../db/schema.ts";
import { sha256Hex } from "./crypto.ts";

const MAX_DOUBLINGS = 20;

/** An attempt that may go ahead (`keys`), or the seconds until the client may try again. */
export type LoginAdmission =
  | { admitted: true; keys: string[] }
  | { admitted: false; retryAfterSeconds: number };

export class LoginThrottle {
  constructor(
    private readonly db: Db,
    private readonly config: ConfigService,
    private readonly clock: Clock,
  ) {}

  /**
   * Counts one attempt of `username` from `client` (its address, or undefined where the runtime
   * does not tell; such callers share one counter).
   *
   * @example
   * const admission = await throttle.admit("admin", "203.0.113.7");
   * if (!admission.admitted) console.log(`429, Retry-After: ${admission.retryAfterSeconds}`);
   */
  async admit(username: string, client: string | undefined): Promise<LoginAdmission> {
    const { values } = await this.config.get();
    const address = client ?? "unknown";
    const counters = [
      { key: await sha256Hex(`client\n${address}`), limit: values.login_failures_per_client },
      { key: await sha256Hex(`account\n${username}\n${address}`), limit: values.login_failures_per_account },
    ];
    const keys = counters.map((c) => c.key);
    // Checked for both first, so that a refused attempt counts against neither.
    const blocked = await this.secondsBlocked(keys);
    if (blocked > 0) return { admitted: false, retryAfterSeconds: blocked };
    const windowMs = values.login_failure_window_seconds * 1000;
    const maxBlockMs = values.login_lockout_max_seconds * 1000;
    for (const { key, limit } of counters) {
      // A concurrent attempt may have started a 429 period since the check.
      const counted = await this.count(key, limit, windowMs, maxBlockMs);
      if (!counted)
        return { admitted: false, retryAfterSeconds: Math.max(1, await this.secondsBlocked([key])) };
    }
    return { admitted: true, keys };
  }

  /** After a successful login: the client's counters start again from zero. */
  async succeeded(admission: { keys: string[] }): Promise<void> {
    await this.db.delete(loginThrottle).where(inArray(loginThrottle.key, admission.keys));
  }

  /** After a failed login: the attempt is already counted; forgotten counters are deleted. */
  async failed(): Promise<void> {
    await this.db.delete(loginThrottle).where(lte(loginThrottle.expiresAt, this.clock.now()));
  }

  /** Adds one to the counter unless it is in a 429 period; false when it is. */
  private async count(key: string, limit: number, windowMs: number, maxBlockMs: number): Promise<boolean> {
    const now = this.clock.now().getTime();
    const t = loginThrottle;
    const next = sql`(CASE WHEN ${t.expiresAt} <= ${now} THEN 1 ELSE ${t.failures} + 1 END)`;
    const blockedUntil = sql`(CASE WHEN ${next} >= ${limit}
      THEN ${now} + min(${maxBlockMs}, 1000 << min(${next} - ${limit}, ${MAX_DOUBLINGS})) END)`;
    const firstBlock = limit <= 1 ? now + Math.min(maxBlockMs, 1000) : null;
    const rows = await this.db
      .insert(t)
      .values({
        key,
        failures: 1,
        blockedUntil: firstBlock === null ? null : new Date(firstBlock),
        expiresAt: new Date(Math.max(now + windowMs, firstBlock ?? 0)),
      })
      .onConflictDoUpdate({
        target: t.key,
        set: {
          failures: next,
          blockedUntil,
          expiresAt: sql`max(${now + windowMs}, coalesce(${blockedUntil}, 0))`,
        },
        setWhere: or(sql`${t.blockedUntil} IS NULL`, lte(t.blockedUntil, new Date(now))),
      })
      .returning({ failures: t.failures });
    return rows.length > 0;
  }

  /** Whole seconds until the last 429 period among `keys` ends; 0 when none is running. */
  private async secondsBlocked(keys: string[]): Promise<number> {
    const now = this.clock.now();
    const rows = await this.db
      .select({ blockedUntil: loginThrottle.blockedUntil })
      .from(loginThrottle)
      .where(and(inArray(loginThrottle.key, keys), gt(loginThrottle.blockedUntil, now)));
    const until = Math.max(0, ...rows.map((r) => r.blockedUntil?.getTime() ?? 0));
    return until > now.getTime() ? Math.ceil((until - now.getTime()) / 1000) : 0;
  }
}
