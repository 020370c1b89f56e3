/**
 * Where Unity Catalog's bearer token comes from: a static `token` (a Databricks personal access
 * token, or the open-source server's), or an OAuth machine-to-machine service principal exchanged
 * at `<workspace_url>/oidc/v1/token` (grant `client_credentials`, scope `all-apis`, the client id
 * and secret as HTTP Basic credentials, as Databricks documents it).
 *
 * - One token at a time, shared by every request; concurrent callers wait on one token request.
 * - An OAuth token is replaced before it expires: once less than a tenth of its lifetime (at most a
 *   minute) is left, by the injected clock; a refused one (401) is dropped so the caller's one retry
 *   fetches a new one. A static token can't be replaced: its refusal is final.
 * - `secrets()` lists the secret and every token issued, for redaction; nothing here logs.
 */
import type { Clock } from "@lakesmith/shared/time";
import { z } from "zod";
import type { TokenSource } from "../../iceberg/rest/auth.ts";
import { type Exchange, type HttpOptions, malformed, send } from "../../iceberg/rest/http.ts";
import { unityStatusError } from "./errors.ts";

export type UnityAuth = { token: string } | { clientId: string; clientSecret: string };

const TokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string(),
  expires_in: z.number().int().positive().optional(),
});

const MAX_REFRESH_MARGIN_MS = 60_000;

/** The token source for `auth` against the workspace at `workspaceUrl`. */
export function unityTokenSource(
  auth: UnityAuth,
  workspaceUrl: string,
  http: HttpOptions,
  clock: Clock,
): TokenSource {
  if ("token" in auth)
    return { token: async () => auth.token, refused: () => false, secrets: () => [auth.token] };
  return new ServicePrincipal(auth, `${workspaceUrl}/oidc/v1/token`, http, clock);
}

class ServicePrincipal implements TokenSource {
  private current: { token: string; refreshAtMs: number | undefined } | undefined;
  private pending: Promise<string> | undefined;
  private readonly issued: string[] = [];

  constructor(
    private readonly auth: { clientId: string; clientSecret: string },
    private readonly tokenUrl: string,
    private readonly http: HttpOptions,
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
    return [this.auth.clientSecret, basic(this.auth), ...this.issued];
  }

  private async fetchToken(): Promise<string> {
    const exchange: Exchange = {
      operation: "getToken",
      method: "POST",
      url: this.tokenUrl,
      contentType: "application/x-www-form-urlencoded",
      body: new URLSearchParams({ grant_type: "client_credentials", scope: "all-apis" }).toString(),
    };
    const authorization = `Basic ${basic(this.auth)}`;
    // `send` sets bearer tokens only; the token endpoint wants the client as Basic credentials.
    const withBasic: typeof fetch = (url, init) =>
      this.http.fetch(url, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), authorization },
      });
    const requestedAt = this.clock.now().getTime();
    const answer = await send({ ...this.http, fetch: withBasic }, exchange);
    if (answer.status !== 200) {
      const hint =
        answer.status === 400 || answer.status === 401
          ? "check the service principal's client id and secret, and the workspace URL"
          : undefined;
      throw unityStatusError(exchange, answer, this.secrets(), hint);
    }
    let json: unknown;
    try {
      json = JSON.parse(answer.text);
    } catch (err) {
      throw malformed(exchange, "OAuth token response (not JSON)", err);
    }
    const parsed = TokenResponse.safeParse(json);
    if (!parsed.success) throw malformed(exchange, "OAuth token response");
    const { access_token: token, expires_in: expiresIn } = parsed.data;
    this.issued.push(token);
    if (this.issued.length > 8) this.issued.shift();
    const lifetimeMs = expiresIn === undefined ? undefined : expiresIn * 1000;
    this.current = {
      token,
      refreshAtMs:
        lifetimeMs === undefined
          ? undefined
          : requestedAt + lifetimeMs - Math.min(MAX_REFRESH_MARGIN_MS, lifetimeMs / 10),
    };
    return token;
  }
}

function basic(auth: { clientId: string; clientSecret: string }): string {
  return Buffer.from(`${auth.clientId}:${auth.clientSecret}`).toString("base64");
}
