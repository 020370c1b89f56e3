/**
 * The break-glass account: the protected Admin `breakglass` that the first start creates beside
 * `admin` (`bootstrap/bootstrap.ts`). It is the one account that may still log in with a password
 * while SSO is enforced (`sso_enforced`), so an installation whose identity provider is down or
 * misconfigured can always be reached. Its password is printed once at first start, or set with
 * `LAKESMITH_BREAKGLASS_PASSWORD`; keep it offline.
 */
import type { User } from "../db/schema.ts";

export const BREAK_GLASS_USERNAME = "breakglass";

/** Whether the user is the installation's break-glass account (the protected `breakglass`). */
export function isBreakGlass(user: Pick<User, "username" | "protected">): boolean {
  return user.username === BREAK_GLASS_USERNAME && user.protected;
}
