/**
 * A real OpenID Connect provider on loopback for single sign-on tests: the certified `oidc-provider`
 * package with its development login and consent pages (any login name is accepted and becomes the
 * subject and email), behind a transparent loopback proxy. The proxy changes nothing unless a test
 * asks it to put another ID token into the next token response (`swapNextIdToken`): one the same
 * provider really signed, for another client, to see the audience check refuse it.
 */
import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oauth from "oauth4webapi";
import Provider from "oidc-provider";
import { Browser } from "./browser.ts";
import type { TestClient } from "./oidc-client.ts";

export async function startOidcProvider(clients: TestClient[], options: { unref?: boolean } = {}) {
  const proxy = createServer();
  proxy.listen(0, "127.0.0.1");
  await once(proxy, "listening");
  const issuer = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({ ...c, grant_types: ["authorization_code"], response_types: ["code"] })),
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub, email: sub, email_verified: true }),
    }),
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    cookies: { keys: ["oidc-test-cookie-key-0000000000"] },
    pkce: { required: () => true },
  });
  const upstream: Server = createServer(provider.callback());
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const upstreamPort = (upstream.address() as AddressInfo).port;
  if (options.unref) for (const server of [proxy, upstream]) server.unref();

  let swap: string | undefined;
  proxy.on("request", (req, res) => {
    const out = request(
      { host: "127.0.0.1", port: upstreamPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (!(swap && req.url === "/token" && answer.statusCode === 200)) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
          body.id_token = swap;
          swap = undefined;
          const text = JSON.stringify(body);
          const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(text)) };
          res.writeHead(200, headers);
          res.end(text);
        });
      },
    );
    req.pipe(out);
  });

  return {
    issuer,
    /** Puts `idToken` into the next successful token response instead of the one issued. */
    swapNextIdToken(idToken: string) {
      swap = idToken;
    },
    /** A real ID token for `client` with `nonce`, from a whole login of `email` at the provider. */
    async idTokenFor(client: TestClient, email: string, nonce: string): Promise<string> {
      const verifier = oauth.generateRandomCodeVerifier();
      const redirectUri = client.redirect_uris[0] ?? "";
      const auth = new URL(`${issuer}/auth`);
      for (const [k, v] of Object.entries({
        client_id: client.client_id,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "openid email",
        nonce,
        state: "s",
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
      }))
        auth.searchParams.set(k, v);
      const browser = new Browser({
        local: { origin: "http://unused.test", request: () => Promise.reject(new Error("unused")) },
        fill: { login: email, password: "x" },
      });
      const { stoppedAt } = await browser.navigate(auth.href, (u) => u.href.startsWith(redirectUri));
      const code = stoppedAt?.searchParams.get("code");
      if (!code) throw new Error("the provider issued no code");
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: redirectUri,
          code_verifier: verifier,
        }),
      });
      const body = (await res.json()) as { id_token?: string };
      if (!body.id_token) throw new Error(`no ID token: ${JSON.stringify(body)}`);
      return body.id_token;
    },
    async close() {
      proxy.closeAllConnections();
      upstream.closeAllConnections();
      await Promise.all([new Promise((r) => proxy.close(r)), new Promise((r) => upstream.close(r))]);
    },
  };
}
