/**
 * Throttles logins per client and per account at a client: password logins (`POST
 * /api/v1/auth/login`) and the SSO callbacks and code exchange (`sso/routes.ts`), whose "account" is
 * the protocol step (`sso:oidc`, `sso:saml`, `sso:code`), since nobody is known before it ends.
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
import { HTTPException } from "hono/http-exception";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { loginThrottle } from "../db/schema.ts";
import { sha256Hex } from "./crypto.ts";

const MAX_DOUBLINGS = 20;

/** An attempt that may go ahead (`keys`), or the seconds until the client may try again. */
export type LoginAdmission =
  | { admitted: true; keys: string[] }
  | { admitted: false; retryAfterSeconds: number };

/** The 429 of a throttled client, with `Retry-After`; `handleError` keeps the header. */
export function tooManyLogins(retryAfterSeconds: number): HTTPException {
  return new HTTPException(429, {
    message: `Too many failed logins from this address; try again in ${retryAfterSeconds} s.`,
    res: new Response(null, { headers: { "retry-after": String(retryAfterSeconds) } }),
  });
}

/**
 * Runs one login attempt of `username` from `client` under the throttle: 429 when the client is
 * blocked, the counters cleared when `attempt` succeeds.
 *
 * @example
 * const pair = await throttledLogin(throttle, username, address, () => auth.login(username, password));
 */
export async function throttledLogin<T>(
  throttle: LoginThrottle,
  username: string,
  client: string | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  const admission = await throttle.admit(username, client);
  if (!admission.admitted) throw tooManyLogins(admission.retryAfterSeconds);
  try {
    const result = await attempt();
    await throttle.succeeded(admission);
    return result;
  } catch (err) {
    await throttle.failed();
    throw err;
  }
}

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
    const counters = await this.counters(username, client, values);
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

  /**
   * Seconds until `client` may try `username` again, without counting an attempt: for steps that
   * lead to a login (an SSO redirect to the identity provider) but are not one. 0 when not blocked.
   */
  async secondsUntilAllowed(username: string, client: string | undefined): Promise<number> {
    const { values } = await this.config.get();
    return this.secondsBlocked((await this.counters(username, client, values)).map((c) => c.key));
  }

  /** After a successful login: the client's counters start again from zero. */
  async succeeded(admission: { keys: string[] }): Promise<void> {
    await this.db.delete(loginThrottle).where(inArray(loginThrottle.key, admission.keys));
  }

  /** After a failed login: the attempt is already counted; forgotten counters are deleted. */
  async failed(): Promise<void> {
    await this.db.delete(loginThrottle).where(lte(loginThrottle.expiresAt, this.clock.now()));
  }

  /** The client's counter and the account-at-this-client counter, with their limits. */
  private async counters(
    username: string,
    client: string | undefined,
    values: { login_failures_per_client: number; login_failures_per_account: number },
  ) {
    const address = client ?? "unknown";
    return [
      { key: await sha256Hex(`client\n${address}`), limit: values.login_failures_per_client },
      { key: await sha256Hex(`account\n${username}\n${address}`), limit: values.login_failures_per_account },
    ];
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
