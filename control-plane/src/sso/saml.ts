/**
 * SAML 2.0 login, SP-initiated: the AuthnRequest goes out by HTTP-Redirect, the Response comes back
 * by HTTP-POST to the assertion consumer service (ACS).
 *
 * - XML signatures need a well-kept XML-DSig library, and the one we use (`@node-saml/node-saml`,
 *   on `xml-crypto`) runs on Node only; the runtime hands in a `SamlEngine` (`adapter/node-saml.ts`)
 *   or none, and without one every SAML route answers 501 saying so.
 * - The engine checks, on the assertion it verified: the signature (the assertion must be signed;
 *   the Response too when `require_signed_response`) against any of the IdP's one or two
 *   certificates, the issuer, the audience (our entity id), the bearer recipient (our ACS URL),
 *   NotBefore / NotOnOrAfter with `SAML_CLOCK_SKEW_MS` of skew, and InResponseTo against a request
 *   we sent and have not seen answered (`pending.ts`): unsolicited responses are refused.
 * - Here: each assertion id is accepted once (`saml_assertions`, kept until the assertion expires),
 *   by one insert-or-ignore, so a replay that races the first use still loses.
 * - Browser binding (`binding.ts`): the start keeps the hash of a cookie with its request. The ACS
 *   is a cross-site POST that carries no Lax cookie, so `accept` parks the verified email under a
 *   one-time ticket (with the hash of the request it answers) and the routes redirect the browser to
 *   a same-site GET, where `finish` takes the ticket once and compares the cookie.
 */
import { type Clock, randomSecret } from "@lakesmith/shared";
import { lte } from "drizzle-orm";
import { HTTPException } from "hono/http-exception";
import type { Db } from "../db/index.ts";
import { samlAssertions } from "../db/schema.ts";
import { ApiError } from "../http/problem.ts";
import { newBinding, requireSameBrowser, restartLogin } from "./binding.ts";
import { CODE_TTL_MS, type SsoPending } from "./pending.ts";
import type { SamlProvider, SsoProviders } from "./providers.ts";

/** Leeway for NotBefore and NotOnOrAfter, in milliseconds. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** How long an assertion id is kept when the assertion states no end. */
const DEFAULT_ASSERTION_LIFE_MS = 24 * 3600_000;

/** This installation as a SAML service provider. */
export interface ServiceProvider {
  entityId: string;
  acsUrl: string;
}

/** Where the engine keeps the ids of AuthnRequests sent and not yet answered. */
export interface SamlRequestStore {
  save(requestId: string, issuedAt: string): Promise<void>;
  issuedAt(requestId: string): Promise<string | undefined>;
  forget(requestId: string): Promise<void>;
}

export interface VerifiedAssertion {
  id: string;
  /** The id of our AuthnRequest the response answers (its `InResponseTo`). */
  inResponseTo: string | undefined;
  email: string | undefined;
  /** The latest NotOnOrAfter the assertion states, if any. */
  notOnOrAfter: Date | undefined;
}

/** The XML part of SAML: requests out, verified assertions in, metadata. */
export interface SamlEngine {
  loginUrl(idp: SamlProvider, sp: ServiceProvider, store: SamlRequestStore): Promise<string>;
  /** The verified assertion of a base64 `SAMLResponse`; throws `SamlRefusal` when any check fails. */
  verify(
    idp: SamlProvider,
    sp: ServiceProvider,
    samlResponse: string,
    store: SamlRequestStore,
  ): Promise<VerifiedAssertion>;
  metadata(sp: ServiceProvider): string;
}

/** A response that failed a check; the message says which. */
export class SamlRefusal extends Error {}

const NODE_ONLY =
  "SAML 2.0 single sign-on needs XML signature verification, which this control plane runs on Node only; this deployment (Cloudflare Workers) offers OIDC single sign-on instead.";

export class SamlFlow {
  constructor(
    private readonly db: Db,
    private readonly providers: SsoProviders,
    private readonly pending: SsoPending,
    private readonly clock: Clock,
    private readonly engine: SamlEngine | undefined,
  ) {}

  /** The IdP address that starts a login (HTTP-Redirect binding), and the browser binding cookie. */
  async start(sp: ServiceProvider): Promise<{ url: string; binding: string }> {
    const engine = this.requireEngine();
    const idp = await this.providers.saml();
    const binding = await newBinding();
    return {
      url: await engine.loginUrl(idp, sp, this.store(new Map(), binding.hash)),
      binding: binding.cookie,
    };
  }

  /**
   * Verifies a POSTed `SAMLResponse` (401 when any check fails) and parks its email under a one-time
   * ticket for `finish`, with the binding of the request it answers.
   */
  async accept(sp: ServiceProvider, samlResponse: string): Promise<string> {
    const engine = this.requireEngine();
    const idp = await this.providers.saml();
    const requests = new Map<string, Record<string, string>>();
    let assertion: VerifiedAssertion;
    try {
      assertion = await engine.verify(idp, sp, samlResponse, this.store(requests));
    } catch (err) {
      if (!(err instanceof SamlRefusal)) throw err;
      throw new ApiError(401, `The SAML response was refused: ${err.message}. Start the login again.`);
    }
    await this.acceptOnce(assertion);
    if (!assertion.email)
      throw new ApiError(
        403,
        "The SAML assertion carries no email: send it as the NameID (emailAddress format) or an `email` attribute.",
      );
    const binding = requests.get(assertion.inResponseTo ?? "")?.binding ?? "";
    const ticket = randomSecret(32);
    await this.pending.save("saml", ticketKey(ticket), { email: assertion.email, binding }, CODE_TTL_MS);
    return ticket;
  }

  /** The email `accept` parked under `ticket`, if this browser started the login; 400 otherwise. */
  async finish(ticket: string, binding: string | undefined): Promise<string> {
    this.requireEngine();
    const parked = await this.pending.take("saml", ticketKey(ticket));
    if (!parked?.email) throw restartLogin("This login is unknown, expired or already finished.");
    await requireSameBrowser(parked.binding, binding);
    return parked.email;
  }

  /** This service provider's metadata XML. */
  metadata(sp: ServiceProvider): string {
    return this.requireEngine().metadata(sp);
  }

  /** The entity id in use: the configured one, else the metadata address. */
  async entityId(metadataUrl: string): Promise<string> {
    try {
      return (await this.providers.saml()).spEntityId ?? metadataUrl;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return metadataUrl;
      throw err;
    }
  }

  private async acceptOnce(assertion: VerifiedAssertion): Promise<void> {
    const now = this.clock.now();
    await this.db.delete(samlAssertions).where(lte(samlAssertions.expiresAt, now));
    const end = assertion.notOnOrAfter?.getTime() ?? now.getTime() + DEFAULT_ASSERTION_LIFE_MS;
    const inserted = await this.db
      .insert(samlAssertions)
      .values({ id: assertion.id, expiresAt: new Date(end + SAML_CLOCK_SKEW_MS) })
      .onConflictDoNothing()
      .returning({ id: samlAssertions.id });
    if (inserted.length === 0)
      throw new ApiError(401, "The SAML response was refused: its assertion was already used (a replay).");
  }

  private requireEngine(): SamlEngine {
    if (!this.engine) throw new HTTPException(501, { message: NODE_ONLY });
    return this.engine;
  }

  /**
   * The engine's view of our requests in flight: a new one is saved with `binding` (the hash of its
   * browser's cookie); each one the engine reads is recorded in `seen`, by request id.
   */
  private store(seen: Map<string, Record<string, string>>, binding = ""): SamlRequestStore {
    return {
      save: (id, issuedAt) => this.pending.save("saml", id, { issued_at: issuedAt, binding }),
      issuedAt: async (id) => {
        const saved = await this.pending.peek("saml", id);
        if (saved) seen.set(id, saved);
        return saved?.issued_at;
      },
      forget: async (id) => {
        await this.pending.take("saml", id);
      },
    };
  }
}

/** A ticket's key among the logins in flight, apart from request ids (`_` and hex). */
const ticketKey = (ticket: string) => `ticket:${ticket}`;
