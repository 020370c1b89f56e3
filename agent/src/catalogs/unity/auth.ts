/**
 * Where Unity Catalog's bearer token comes from: a static `token` (a Databricks personal access
 * token, or the open-source server's), or an OAuth machine-to-machine service principal exchanged
 * at `<workspace_url>/oidc/v1/token` (grant `client_credentials`, scope `all-apis`, the client id
 * and secret as HTTP Basic credentials, as Databricks documents it).
 *
 * The OAuth token is cached and refreshed as the Iceberg REST client's is (`OAuthTokens`); a static
 * token can't be replaced, so its refusal is final. Nothing here logs.
 */
import type { Clock } from "@lakesmith/shared/time";
import { issuedToken, OAuthTokens, type TokenSource } from "../../iceberg/rest/auth.ts";
import { type Exchange, type HttpOptions, send } from "../../iceberg/rest/http.ts";
import { unityStatusError } from "./errors.ts";

export type UnityAuth = { token: string } | { clientId: string; clientSecret: string };

/** The token source for `auth` against the workspace at `workspaceUrl`. */
export function unityTokenSource(
  auth: UnityAuth,
  workspaceUrl: string,
  http: HttpOptions,
  clock: Clock,
): TokenSource {
  if ("token" in auth)
    return { token: async () => auth.token, refused: () => false, secrets: () => [auth.token] };
  return servicePrincipal(auth, `${workspaceUrl}/oidc/v1/token`, http, clock);
}

/** A service principal's token: the client as HTTP Basic credentials, scope `all-apis`. */
function servicePrincipal(
  auth: { clientId: string; clientSecret: string },
  tokenUrl: string,
  http: HttpOptions,
  clock: Clock,
): TokenSource {
  return new OAuthTokens(
    [auth.clientSecret, basic(auth)],
    async (secrets) => {
      const exchange: Exchange = {
        operation: "getToken",
        method: "POST",
        url: tokenUrl,
        contentType: "application/x-www-form-urlencoded",
        body: new URLSearchParams({ grant_type: "client_credentials", scope: "all-apis" }).toString(),
        // The token endpoint wants the client as HTTP Basic credentials.
        authorization: `Basic ${basic(auth)}`,
      };
      const answer = await send(http, exchange);
      if (answer.status !== 200) {
        const hint =
          answer.status === 400 || answer.status === 401
            ? "check the service principal's client id and secret, and the workspace URL"
            : undefined;
        throw unityStatusError(exchange, answer, secrets, hint);
      }
      return issuedToken(exchange, answer.text, "OAuth token response");
    },
    clock,
  );
}

function basic(auth: { clientId: string; clientSecret: string }): string {
  return Buffer.from(`${auth.clientId}:${auth.clientSecret}`).toString("base64");
}
