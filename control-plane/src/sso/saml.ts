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
 */
import type { Clock } from "@lakesmith/shared";
import { lte } from "drizzle-orm";
import { HTTPException } from "hono/http-exception";
import type { Db } from "../db/index.ts";
import { samlAssertions } from "../db/schema.ts";
import { ApiError } from "../http/problem.ts";
import type { SsoPending } from "./pending.ts";
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

  /** The IdP address that starts a login (HTTP-Redirect binding). */
  async start(sp: ServiceProvider): Promise<string> {
    const engine = this.requireEngine();
    const idp = await this.providers.saml();
    return engine.loginUrl(idp, sp, this.store());
  }

  /** The email of the verified assertion in a POSTed `SAMLResponse`; 401 when any check fails. */
  async finish(sp: ServiceProvider, samlResponse: string): Promise<string> {
    const engine = this.requireEngine();
    const idp = await this.providers.saml();
    let assertion: VerifiedAssertion;
    try {
      assertion = await engine.verify(idp, sp, samlResponse, this.store());
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
    return assertion.email;
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

  private store(): SamlRequestStore {
    return {
      save: (id, issuedAt) => this.pending.save("saml", id, { issued_at: issuedAt }),
      issuedAt: async (id) => (await this.pending.peek("saml", id))?.issued_at,
      forget: async (id) => {
        await this.pending.take("saml", id);
      },
    };
  }
}
