/**
 * Binds an SSO login to the browser that started it, for both protocols: the start sets a random
 * value as an HttpOnly cookie and the login in flight keeps only its SHA-256; the step that ends the
 * login compares the cookie it is sent with that hash. A callback link or a SAML Response carried to
 * another browser (login CSRF, a stolen or forwarded link) finishes nothing.
 *
 * - The cookie is `SameSite=Lax`, `Secure` when the public base is https, scoped to its protocol's
 *   routes, and lives as long as a login in flight (`REQUEST_TTL_MS`).
 * - Lax cookies ride top-level GET navigations only. The OIDC callback is one; the SAML ACS is a
 *   cross-site POST that never carries the cookie, so SAML checks it one step later, on the same-site
 *   GET the ACS redirects to (`routes.ts`).
 * - A missing or wrong cookie is a 400 that says the login was started in another browser.
 */
import { randomSecret } from "@lakesmith/shared";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { sha256Hex } from "../auth/crypto.ts";
import type { SsoProtocol } from "../db/schema.ts";
import { ApiError } from "../http/problem.ts";
import { REQUEST_TTL_MS } from "./pending.ts";

/** A login refused at its last step: the user starts again. */
export const restartLogin = (detail: string) => new ApiError(400, `${detail} Start the login again.`);

/** A fresh binding: the cookie value for the browser, and the hash the login in flight keeps. */
export async function newBinding(): Promise<{ cookie: string; hash: string }> {
  const cookie = randomSecret(32);
  return { cookie, hash: await sha256Hex(cookie) };
}

/** Refuses unless `cookie` is the one whose hash the login kept. */
export async function requireSameBrowser(keptHash: string | undefined, cookie: string | undefined) {
  if (!keptHash || !cookie || (await sha256Hex(cookie)) !== keptHash)
    throw restartLogin("This login was started in another browser (its cookie is missing).");
}

const cookieName = (protocol: SsoProtocol) => `lakesmith_sso_${protocol}`;
const cookiePath = (protocol: SsoProtocol) => `/api/v1/auth/sso/${protocol}`;

/** Sets the binding cookie on the answer that sends the browser to the provider. */
export function setBindingCookie(c: Context, protocol: SsoProtocol, value: string, base: string): void {
  setCookie(c, cookieName(protocol), value, {
    httpOnly: true,
    sameSite: "Lax",
    secure: base.startsWith("https:"),
    path: cookiePath(protocol),
    maxAge: REQUEST_TTL_MS / 1000,
  });
}

/** The binding cookie the request carries, cleared on the answer: it serves one login. */
export function takeBindingCookie(c: Context, protocol: SsoProtocol): string | undefined {
  const value = getCookie(c, cookieName(protocol));
  deleteCookie(c, cookieName(protocol), { path: cookiePath(protocol) });
  return value;
}
