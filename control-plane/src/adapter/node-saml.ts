/**
 * The SAML engine on Node (`sso/saml.ts`): `@node-saml/node-saml`, which verifies XML signatures with
 * `xml-crypto`. Not bundled for Workers, whose deployment has no SAML engine.
 *
 * - Configured per call from the stored provider, so a certificate rotation applies at once.
 * - node-saml verifies the signed assertion (and the Response when required), issuer, audience,
 *   time conditions and InResponseTo, and reads the profile from the signed XML only; this file adds
 *   the bearer recipient check (SubjectConfirmationData `Recipient` must be our ACS URL), which
 *   node-saml leaves to the caller, and reads the assertion id and end for the replay check, and the
 *   request it answers (for the browser binding).
 */
import {
  type CacheProvider,
  generateServiceProviderMetadata,
  type Profile,
  SAML,
  ValidateInResponseTo,
} from "@node-saml/node-saml";
import { REQUEST_TTL_MS } from "../sso/pending.ts";
import type { SamlProvider } from "../sso/providers.ts";
import {
  SAML_CLOCK_SKEW_MS,
  type SamlEngine,
  SamlRefusal,
  type SamlRequestStore,
  type ServiceProvider,
  type VerifiedAssertion,
} from "../sso/saml.ts";

const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const EMAIL_ATTRIBUTES = ["email", "mail", "emailaddress", "urn:oid:0.9.2342.19200300.100.1.3"];
const CLAIM_EMAIL = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress";

/** xml2js nodes as node-saml parses them: `$` attributes, `_` text, children in arrays. */
type Node = { $?: Record<string, string>; _?: string } & { [child: string]: Node[] | undefined };

export const nodeSamlEngine: SamlEngine = {
  async loginUrl(idp, sp, store) {
    return saml(idp, sp, store).getAuthorizeUrlAsync("", undefined, {});
  },

  async verify(idp, sp, samlResponse, store) {
    let profile: Profile | null;
    try {
      ({ profile } = await saml(idp, sp, store).validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (err) {
      throw new SamlRefusal((err as Error).message);
    }
    if (!profile) throw new SamlRefusal("it carries no assertion");
    return assertionOf(profile, sp);
  },

  metadata(sp) {
    return generateServiceProviderMetadata({
      issuer: sp.entityId,
      callbackUrl: sp.acsUrl,
      identifierFormat: EMAIL_FORMAT,
      wantAssertionsSigned: true,
    });
  },
};

function saml(idp: SamlProvider, sp: ServiceProvider, store: SamlRequestStore): SAML {
  const cacheProvider: CacheProvider = {
    async saveAsync(key, value) {
      await store.save(key, value);
      return { value, createdAt: Date.now() };
    },
    async getAsync(key) {
      return (await store.issuedAt(key)) ?? null;
    },
    async removeAsync(key) {
      if (key) await store.forget(key);
      return key;
    },
  };
  return new SAML({
    entryPoint: idp.idpSsoUrl,
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    idpCert: idp.idpCertificates,
    idpIssuer: idp.idpEntityId,
    audience: sp.entityId,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: idp.requireSignedResponse,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: REQUEST_TTL_MS,
    cacheProvider,
    identifierFormat: EMAIL_FORMAT,
    disableRequestedAuthnContext: true,
  });
}

function assertionOf(profile: Profile, sp: ServiceProvider): VerifiedAssertion {
  const assertion = (profile.getAssertion?.() as { Assertion?: Node } | undefined)?.Assertion;
  const id = assertion?.$?.ID;
  if (!assertion || !id) throw new SamlRefusal("the assertion has no ID");
  const confirmations = (assertion.Subject?.[0]?.SubjectConfirmation ?? []).flatMap(
    (c) => c.SubjectConfirmationData ?? [],
  );
  if (!confirmations.some((data) => data.$?.Recipient === sp.acsUrl))
    throw new SamlRefusal(
      `no subject confirmation names this service's ACS URL ${sp.acsUrl} as its Recipient`,
    );
  const ends = [
    assertion.Conditions?.[0]?.$?.NotOnOrAfter,
    ...confirmations.map((data) => data.$?.NotOnOrAfter),
  ].flatMap((text) => (text ? [Date.parse(text)] : []));
  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  const attribute = [...EMAIL_ATTRIBUTES, CLAIM_EMAIL]
    .map((name) => Object.entries(attributes).find(([key]) => key.toLowerCase() === name)?.[1])
    .find((value) => typeof value === "string") as string | undefined;
  const nameIdEmail = profile.nameIDFormat === EMAIL_FORMAT ? profile.nameID : undefined;
  return {
    id,
    inResponseTo: typeof profile.inResponseTo === "string" ? profile.inResponseTo : undefined,
    email: attribute ?? nameIdEmail,
    notOnOrAfter: ends.length > 0 ? new Date(Math.max(...ends)) : undefined,
  };
}
