/**
 * Where the bearer token comes from: a static token, or the OAuth2 client credentials flow
 * against the catalog's token endpoint (`<uri>/v1/oauth/tokens` unless told otherwise).
 *
 * - One token at a time, shared by every request; concurrent callers wait on one token request.
 * - A token with `expires_in` is replaced before it expires: once less than a tenth of its
 *   lifetime (at most a minute) is left, by the injected clock. Without `expires_in` it is used
 *   until the catalog refuses it.
 * - A refused token (401, 419) is dropped, so the caller's one retry fetches a new one; a static
 *   token can't be replaced, so a refusal is final.
 * - The secret and the tokens are listed by `secrets()`, for redaction; nothing here logs.
 */
import type { Clock } from "@lakesmith/shared/time";
import { z } from "zod";
import { type Exchange, type HttpOptions, malformed, send, statusError } from "./http.ts";

/** A static bearer token. */
export interface TokenAuth {
  token: string;
}

/** OAuth2 client credentials, exchanged at `tokenUrl` for a bearer token. */
export interface ClientCredentialsAuth {
  clientId: string;
  clientSecret: string;
  /** Default: `<uri>/v1/oauth/tokens`, the spec's token endpoint. */
  tokenUrl?: string;
  /** Default: `catalog`, the scope the spec's security section names. */
  scope?: string;
}

export type RestCatalogAuth = TokenAuth | ClientCredentialsAuth;

export interface TokenSource {
  /** The bearer token to send, or undefined where the catalog takes none. */
  token(): Promise<string | undefined>;
  /** The catalog refused `token`: drop it. True when a new one can be fetched for a retry. */
  refused(token: string | undefined): boolean;
  /** Everything that must never appear in a message. */
  secrets(): string[];
}

/** The token source for `auth`, or one that sends no token. */
export function tokenSource(
  auth: RestCatalogAuth | undefined,
  uri: string,
  http: HttpOptions,
  clock: Clock,
): TokenSource {
  if (auth === undefined) return { token: async () => undefined, refused: () => false, secrets: () => [] };
  if ("token" in auth)
    return { token: async () => auth.token, refused: () => false, secrets: () => [auth.token] };
  return clientCredentials(auth, auth.tokenUrl ?? `${uri}/v1/oauth/tokens`, http, clock);
}

const TokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string(),
  expires_in: z.number().int().positive().optional(),
});

const MAX_REFRESH_MARGIN_MS = 60_000;

/** A token endpoint's answer: the token and how long it lives, if the endpoint says. */
export interface IssuedToken {
  token: string;
  expiresInS: number | undefined;
}

/**
 * An OAuth token, fetched by `exchange` and cached as the module comment says: one at a time,
 * replaced before it expires, dropped when refused. `credentials` (the client secret and the
 * like) and every token issued are listed by `secrets()`; `exchange` is given that list so its
 * errors can leave them out.
 */
export class OAuthTokens implements TokenSource {
  private current: { token: string; refreshAtMs: number | undefined } | undefined;
  private pending: Promise<string> | undefined;
  private readonly issued: string[] = [];

  constructor(
    private readonly credentials: readonly string[],
    private readonly exchange: (secrets: string[]) => Promise<IssuedToken>,
    private readonly clock: Clock,
  ) {}

  async token(): Promise<string> {
    const current = this.current;
    if (current && (current.refreshAtMs === undefined || this.clock.now().getTime() < current.refreshAtMs))
      return current.token;
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  refused(token: string | undefined): boolean {
    if (this.current?.token === token) this.current = undefined;
    return true;
  }

  secrets(): string[] {
    return [...this.credentials, ...this.issued];
  }

  private async fetchToken(): Promise<string> {
    const requestedAt = this.clock.now().getTime();
    const { token, expiresInS } = await this.exchange(this.secrets());
    this.issued.push(token);
    if (this.issued.length > 8) this.issued.shift();
    this.current = {
      token,
      refreshAtMs: expiresInS === undefined ? undefined : refreshAt(requestedAt, expiresInS),
    };
    return token;
  }
}

/** The token in a token endpoint's answer `text`; a malformed answer is a `malformed` error naming `what`. */
export function issuedToken(exchange: Exchange, text: string, what: string): IssuedToken {
  const parsed = TokenResponse.safeParse(parseOrUndefined(text));
  if (!parsed.success) throw malformed(exchange, what);
  return { token: parsed.data.access_token, expiresInS: parsed.data.expires_in };
}

/** The client credentials flow of the Iceberg REST spec: the client's id and secret in the form. */
function clientCredentials(auth: ClientCredentialsAuth, tokenUrl: string, http: HttpOptions, clock: Clock) {
  return new OAuthTokens(
    [auth.clientSecret],
    async (secrets) => {
      const exchange: Exchange = {
        operation: "getToken",
        method: "POST",
        url: tokenUrl,
        contentType: "application/x-www-form-urlencoded",
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: auth.clientId,
          client_secret: auth.clientSecret,
          scope: auth.scope ?? "catalog",
        }).toString(),
      };
      const answer = await send(http, exchange);
      if (answer.status !== 200) {
        const hint =
          answer.status === 400 || answer.status === 401
            ? "check the client id and secret, and the token URL"
            : undefined;
        throw statusError(exchange, answer, secrets, hint);
      }
      return issuedToken(exchange, answer.text, "OAuthTokenResponse");
    },
    clock,
  );
}

/** When to replace a token issued at `issuedAtMs` that lives `expiresInS` seconds. */
function refreshAt(issuedAtMs: number, expiresInS: number): number {
  const lifetimeMs = expiresInS * 1000;
  return issuedAtMs + lifetimeMs - Math.min(MAX_REFRESH_MARGIN_MS, lifetimeMs / 10);
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether an auth error may be fixed by a new token (401 Unauthorized, 419 Authentication Timeout). */
export function isTokenRefusal(status: number): boolean {
  return status === 401 || status === 419;
}
