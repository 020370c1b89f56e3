/**
 * Credentials: login with a password, refresh-token rotation, logout, and turning a bearer
 * credential into a principal.
 *
 * - Access tokens are HS256 JWTs (`typ: access`), valid for `access_token_ttl_seconds`.
 * - Refresh tokens (`lsr_...`) and API keys (`lsk_...`) are random secrets stored only as SHA-256.
 * - Rotation is one conditional UPDATE on the old refresh token: of two concurrent refreshes with
 *   the same token exactly one wins. Presenting an already rotated token again revokes every refresh
 *   token of that user, since it means the token was copied.
 * - A credential is re-checked against its user (or key row) at least every few seconds (see
 *   `PrincipalCache`), so deactivation, deletion and role changes take effect at once on this
 *   instance and within seconds on others, rather than when the access token expires.
 * - While `sso_enforced` is on, password users but the break-glass account (`break-glass.ts`) can
 *   neither log in nor refresh: 403 after a correct password, so wrong ones still count as failures.
 * - An SSO login (`sso/login.ts`) ends in `signIn`, as a password login does: the same token pair,
 *   with the SSO refresh-token TTL. TTLs are read from the configuration (cached at most 5 s) on
 *   every issue, so a change reaches new tokens within seconds.
 */
import { type Clock, epochSeconds, newId, randomSecret } from "@lakesmith/shared";
import { and, eq, gt, isNotNull, isNull, sql } from "drizzle-orm";
import { sign, verify } from "hono/jwt";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { apiKeys, refreshTokens, type User, users } from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";
import { forbidden, unauthorized } from "../http/problem.ts";
import { isScope, type Principal, type Scope } from "./access.ts";
import { isBreakGlass } from "./break-glass.ts";
import { DUMMY_PASSWORD_HASH, sha256Hex, verifyPassword } from "./crypto.ts";
import type { PrincipalCache } from "./principal-cache.ts";

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: "Bearer";
  expires_in: number;
}

export const API_KEY_PREFIX = "lsk_";
const REFRESH_PREFIX = "lsr_";
const API_KEY_TOUCH_INTERVAL_MS = 60_000;

export class AuthService {
  // The per-request credential lookups, built once and kept prepared (`db/statement-cache.ts`).
  private readonly lookups;

  constructor(
    private readonly db: Db,
    private readonly config: ConfigService,
    private readonly signingKey: () => Promise<string>,
    private readonly clock: Clock,
    private readonly cache: PrincipalCache,
  ) {
    this.lookups = {
      user: preparedSelect(
        db,
        db
          .select({ id: users.id, username: users.username, role: users.role, status: users.status })
          .from(users)
          .where(eq(users.id, sql.placeholder("id"))),
      ),
      apiKey: preparedSelect(
        db,
        db
          .select()
          .from(apiKeys)
          .where(eq(apiKeys.keyHash, sql.placeholder("keyHash"))),
      ),
    };
  }

  async login(username: string, password: string): Promise<TokenPair> {
    const [user] = await this.db.select().from(users).where(eq(users.username, username));
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    if (!user || !ok || user.authType !== "password") throw unauthorized("Invalid username or password.");
    if (user.status !== "active")
      throw unauthorized("This account is inactive; ask an Admin to activate it.");
    await this.refuseIfSsoEnforced(user);
    return this.signIn(user);
  }

  /** Records the login and issues a token pair: the last step of every login, password or SSO. */
  async signIn(user: User): Promise<TokenPair> {
    await this.db.update(users).set({ lastLoginAt: this.clock.now() }).where(eq(users.id, user.id));
    return this.issue(user);
  }

  /** Revokes every live refresh token of a user (deactivated, role changed). */
  async revokeRefreshTokens(userId: string): Promise<void> {
    await this.db
      .update(refreshTokens)
      .set({ revokedAt: this.clock.now() })
      .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)));
  }

  private async refuseIfSsoEnforced(user: User): Promise<void> {
    if (user.authType !== "password" || isBreakGlass(user)) return;
    const { values } = await this.config.get();
    if (values.sso_enforced)
      throw forbidden(
        "Password logins are turned off (sso_enforced): sign in through your identity provider; only the break-glass account may use a password.",
      );
  }

  async refresh(refreshToken: string): Promise<TokenPair> {
    const now = this.clock.now();
    const tokenHash = await sha256Hex(refreshToken);
    const [rotated] = await this.db
      .update(refreshTokens)
      .set({ revokedAt: now })
      .where(
        and(
          eq(refreshTokens.tokenHash, tokenHash),
          isNull(refreshTokens.revokedAt),
          gt(refreshTokens.expiresAt, now),
        ),
      )
      .returning({ userId: refreshTokens.userId });
    if (!rotated) {
      await this.revokeAllIfReused(tokenHash);
      throw unauthorized("The refresh token is invalid, expired or already used; log in again.");
    }
    const [user] = await this.db.select().from(users).where(eq(users.id, rotated.userId));
    if (user?.status !== "active") throw unauthorized("This account is inactive or was deleted.");
    await this.refuseIfSsoEnforced(user);
    return this.issue(user);
  }

  /** Revokes a refresh token. Unknown or already revoked tokens are accepted silently. */
  async logout(refreshToken: string): Promise<void> {
    await this.db
      .update(refreshTokens)
      .set({ revokedAt: this.clock.now() })
      .where(
        and(eq(refreshTokens.tokenHash, await sha256Hex(refreshToken)), isNull(refreshTokens.revokedAt)),
      );
  }

  /** Turns the value of a bearer credential into a principal, or throws 401. */
  async authenticate(credential: string): Promise<Principal> {
    const cached = this.cache.get(credential);
    if (cached) return cached;
    return credential.startsWith(API_KEY_PREFIX)
      ? this.authenticateKey(credential)
      : this.authenticateToken(credential);
  }

  private async authenticateToken(token: string): Promise<Principal> {
    let payload: Record<string, unknown>;
    try {
      // Time claims are checked against the service's clock (the one that issued them), not Date.now().
      payload = await verify(token, await this.signingKey(), {
        alg: "HS256",
        exp: false,
        nbf: false,
        iat: false,
      });
    } catch {
      throw unauthorized("The access token is invalid or expired; refresh it or log in again.");
    }
    const nowS = this.clock.now().getTime() / 1000;
    if (typeof payload.exp !== "number" || payload.exp <= nowS)
      throw unauthorized("The access token is invalid or expired; refresh it or log in again.");
    if (payload.typ !== "access" || typeof payload.sub !== "string")
      throw unauthorized("Not an access token.");
    const user = await this.lookups.user.get({ id: payload.sub });
    if (user?.status !== "active") throw unauthorized("This account is inactive or was deleted.");
    const principal: Principal = { kind: "user", userId: user.id, username: user.username, role: user.role };
    this.cache.set(token, principal, typeof payload.exp === "number" ? payload.exp * 1000 : undefined);
    return principal;
  }

  private async authenticateKey(key: string): Promise<Principal> {
    const row = await this.lookups.apiKey.get({ keyHash: await sha256Hex(key) });
    const now = this.clock.now();
    if (!row) throw unauthorized("Unknown API key.");
    if (row.expiresAt && row.expiresAt <= now) throw unauthorized("This API key has expired.");
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > API_KEY_TOUCH_INTERVAL_MS) {
      await this.db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, row.id));
    }
    const principal: Principal = {
      kind: "api_key",
      keyId: row.id,
      scopes: row.scopes.filter(isScope) as Scope[],
    };
    this.cache.set(key, principal, row.expiresAt?.getTime());
    return principal;
  }

  private async issue(user: User): Promise<TokenPair> {
    const { values } = await this.config.get();
    const now = this.clock.now();
    const iat = epochSeconds(now);
    const accessTtl = values.access_token_ttl_seconds;
    const refreshTtl =
      user.authType === "password"
        ? values.refresh_token_ttl_local_seconds
        : values.refresh_token_ttl_sso_seconds;
    const accessToken = await sign(
      { sub: user.id, username: user.username, role: user.role, typ: "access", iat, exp: iat + accessTtl },
      await this.signingKey(),
      "HS256",
    );
    const refreshToken = REFRESH_PREFIX + randomSecret(32);
    await this.db.insert(refreshTokens).values({
      id: newId("rtk"),
      userId: user.id,
      tokenHash: await sha256Hex(refreshToken),
      expiresAt: new Date(now.getTime() + refreshTtl * 1000),
    });
    return {
      access_token: accessToken,
      refresh_token: refreshToken,
      token_type: "Bearer",
      expires_in: accessTtl,
    };
  }

  private async revokeAllIfReused(tokenHash: string): Promise<void> {
    const [reused] = await this.db
      .select({ userId: refreshTokens.userId })
      .from(refreshTokens)
      .where(and(eq(refreshTokens.tokenHash, tokenHash), isNotNull(refreshTokens.revokedAt)));
    if (reused) await this.revokeRefreshTokens(reused.userId);
  }
}
