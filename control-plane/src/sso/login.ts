/**
 * The end of every SSO login, whatever the protocol: who the asserted email is, and the hand-off of
 * the token pair to the console.
 *
 * - The asserted email must equal a user's email, compared case-insensitively (emails are stored
 *   lower-cased). Unknown email, a user of another auth type (a password user, or an OIDC user
 *   arriving through SAML) and an Inactive user are refused with 403 and a message that says why.
 * - The callback answers with a one-time code (`pending.ts`); `POST /api/v1/auth/sso/token` trades
 *   it for the same token pair a password login gets, with the SSO refresh-token TTL, and records
 *   the login time (`AuthService.signIn`).
 */
import { eq } from "drizzle-orm";
import type { AuthService, TokenPair } from "../auth/service.ts";
import type { Db } from "../db/index.ts";
import { type SsoProtocol, type User, users } from "../db/schema.ts";
import { ApiError, forbidden, unauthorized } from "../http/problem.ts";
import type { SsoPending } from "./pending.ts";

const PROTOCOL_NAMES: Record<User["authType"], string> = {
  password: "a password",
  oidc: "OIDC single sign-on",
  saml: "SAML single sign-on",
};

export class SsoLogin {
  constructor(
    private readonly db: Db,
    private readonly auth: AuthService,
    private readonly pending: SsoPending,
  ) {}

  /** The one-time code for the user the provider asserted, or 403 saying why there is none. */
  async complete(protocol: SsoProtocol, assertedEmail: string): Promise<string> {
    const user = await this.userFor(protocol, assertedEmail);
    return this.pending.issueCode(user.id);
  }

  /** Trades a one-time code for a token pair; 401 when the code is unknown, used or expired. */
  async exchange(code: string): Promise<TokenPair> {
    const userId = await this.pending.redeemCode(code);
    const [user] = userId ? await this.db.select().from(users).where(eq(users.id, userId)) : [];
    if (!user) throw unauthorized("The login code is invalid, expired or already used; sign in again.");
    // Deactivated or switched to another auth type in the seconds since the callback.
    if (user.status !== "active" || user.authType === "password")
      throw unauthorized("This account can no longer sign in through single sign-on.");
    return this.auth.signIn(user);
  }

  private async userFor(protocol: SsoProtocol, assertedEmail: string): Promise<User> {
    const email = assertedEmail.trim().toLowerCase();
    if (!email) throw new ApiError(403, "The identity provider asserted no email address.");
    const [user] = await this.db.select().from(users).where(eq(users.email, email));
    if (!user)
      throw forbidden(
        `No Lakesmith user has the email ${email}. Ask an Admin to add you as a ${protocol === "oidc" ? "OIDC" : "SAML 2.0"} user with this email.`,
      );
    if (user.authType !== protocol)
      throw forbidden(
        `The user ${email} signs in with ${PROTOCOL_NAMES[user.authType]}, not ${PROTOCOL_NAMES[protocol]}.`,
      );
    if (user.status !== "active")
      throw forbidden(`The user ${email} is inactive; ask an Admin to activate the account.`);
    return user;
  }
}
