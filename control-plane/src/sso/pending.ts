/**
 * What an SSO login keeps between its steps, in the database so any replica or isolate can finish
 * what another started.
 *
 * - A login in flight (`sso_requests`) is keyed by the SHA-256 of its OIDC `state` or SAML request
 *   id, lives `REQUEST_TTL_MS`, and is consumed by one conditional DELETE: a callback replayed or
 *   raced finds nothing the second time. A SAML login verified at the ACS waits there under its
 *   ticket for `CODE_TTL_MS`, until the browser check (`binding.ts`).
 * - A finished login hands the console a one-time code (`sso_login_codes`, stored as SHA-256), good
 *   for `CODE_TTL_MS` and exchanged once for the token pair; tokens never travel in a URL.
 * - Expired rows of both tables are deleted whenever a new one is written, so they stay small.
 */
import { type Clock, randomSecret } from "@lakesmith/shared";
import { and, eq, gt, lte } from "drizzle-orm";
import { sha256Hex } from "../auth/crypto.ts";
import type { Db } from "../db/index.ts";
import { type SsoProtocol, ssoLoginCodes, ssoRequests } from "../db/schema.ts";

/** How long a user may take at the identity provider. */
export const REQUEST_TTL_MS = 10 * 60_000;
/** How long the console has to exchange a login code. */
export const CODE_TTL_MS = 60_000;

export class SsoPending {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Remembers a login in flight under `key` (the state, request id or SAML ticket) with what its
   * next step checks, for `ttlMs`.
   */
  async save(
    protocol: SsoProtocol,
    key: string,
    data: Record<string, string>,
    ttlMs = REQUEST_TTL_MS,
  ): Promise<void> {
    const now = this.clock.now();
    await this.db.delete(ssoRequests).where(lte(ssoRequests.expiresAt, now));
    await this.db.insert(ssoRequests).values({
      key: await sha256Hex(key),
      protocol,
      data: JSON.stringify(data),
      expiresAt: new Date(now.getTime() + ttlMs),
    });
  }

  /** The data of the live login saved under `key`, without consuming it; undefined when none. */
  async peek(protocol: SsoProtocol, key: string): Promise<Record<string, string> | undefined> {
    const [row] = await this.db
      .select({ data: ssoRequests.data })
      .from(ssoRequests)
      .where(this.live(protocol, await sha256Hex(key)));
    return row ? (JSON.parse(row.data) as Record<string, string>) : undefined;
  }

  /** Takes the login saved under `key`: its data, or undefined when unknown, expired or taken. */
  async take(protocol: SsoProtocol, key: string): Promise<Record<string, string> | undefined> {
    const [row] = await this.db
      .delete(ssoRequests)
      .where(this.live(protocol, await sha256Hex(key)))
      .returning({ data: ssoRequests.data });
    return row ? (JSON.parse(row.data) as Record<string, string>) : undefined;
  }

  /** A one-time code for the user's token pair. */
  async issueCode(userId: string): Promise<string> {
    const now = this.clock.now();
    await this.db.delete(ssoLoginCodes).where(lte(ssoLoginCodes.expiresAt, now));
    const code = randomSecret(32);
    await this.db.insert(ssoLoginCodes).values({
      codeHash: await sha256Hex(code),
      userId,
      expiresAt: new Date(now.getTime() + CODE_TTL_MS),
    });
    return code;
  }

  /** The user a code was issued to; the code is spent either way. Undefined when unknown or expired. */
  async redeemCode(code: string): Promise<string | undefined> {
    const [row] = await this.db
      .delete(ssoLoginCodes)
      .where(
        and(eq(ssoLoginCodes.codeHash, await sha256Hex(code)), gt(ssoLoginCodes.expiresAt, this.clock.now())),
      )
      .returning({ userId: ssoLoginCodes.userId });
    return row?.userId;
  }

  private live(protocol: SsoProtocol, keyHash: string) {
    return and(
      eq(ssoRequests.key, keyHash),
      eq(ssoRequests.protocol, protocol),
      gt(ssoRequests.expiresAt, this.clock.now()),
    );
  }
}
