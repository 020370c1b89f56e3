/**
 * A SAML 2.0 identity provider on loopback for single sign-on tests. It takes real AuthnRequests by
 * HTTP-Redirect (deflated, base64), answers with an auto-posting form that carries a Response with
 * real XML signatures (`xml-crypto`, RSA-SHA256, exclusive c14n) made with its own key pairs and
 * self-signed certificates, and can be told how to get the next answer wrong (`next`).
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { inflateRawSync } from "node:zlib";
import { generate } from "selfsigned";
import { SignedXml } from "xml-crypto";

export interface IdpKey {
  privateKey: string;
  cert: string;
}

/** How the next Response is made; anything left out is the correct value. */
export interface ResponsePlan {
  email: string;
  signAssertion?: boolean;
  signResponse?: boolean;
  key?: IdpKey;
  audience?: string;
  recipient?: string;
  assertionId?: string;
  /** Seconds from now: NotBefore and NotOnOrAfter of the conditions and the confirmation. */
  validFrom?: number;
  validUntil?: number;
  /** Changes the signed XML afterwards (tampering, signature wrapping). */
  afterSigning?: (xml: string) => string;
}

const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
const SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256";

export async function newIdpKey(name: string): Promise<IdpKey> {
  const pems = await generate([{ name: "commonName", value: name }], { keySize: 2048, algorithm: "sha256" });
  return { privateKey: pems.private, cert: pems.cert };
}

/** Signs the element `local` (Assertion or Response) of `xml`, the signature after its Issuer. */
export function sign(xml: string, local: "Assertion" | "Response", key: IdpKey): string {
  const sig = new SignedXml({
    privateKey: key.privateKey,
    signatureAlgorithm: RSA_SHA256,
    canonicalizationAlgorithm: EXC_C14N,
  });
  sig.addReference({
    xpath: `//*[local-name(.)='${local}']`,
    transforms: [ENVELOPED, EXC_C14N],
    digestAlgorithm: SHA256,
  });
  sig.computeSignature(xml, {
    location: { reference: `//*[local-name(.)='${local}']/*[local-name(.)='Issuer']`, action: "after" },
  });
  return sig.getSignedXml();
}

export async function startSamlIdp(entityId: string) {
  const keys = { current: await newIdpKey("idp-current"), next: await newIdpKey("idp-next") };
  let plan: ResponsePlan = { email: "nobody@example.com" };
  let counter = 0;
  /** The Response XML last sent, as posted (base64 decoded). */
  let lastResponse = "";

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://idp");
    const request = url.searchParams.get("SAMLRequest");
    if (url.pathname !== "/sso" || !request) {
      res.writeHead(404).end();
      return;
    }
    const authn = inflateRawSync(Buffer.from(request, "base64")).toString();
    const requestId = /\sID="([^"]+)"/.exec(authn)?.[1] ?? "";
    const acs = /AssertionConsumerServiceURL="([^"]+)"/.exec(authn)?.[1] ?? "";
    const spEntity = /<(?:saml2?:)?Issuer[^>]*>([^<]+)</.exec(authn)?.[1] ?? "";
    lastResponse = responseXml(plan, { requestId, acs, spEntity, n: ++counter });
    const form = `<!doctype html><html><body onload="document.forms[0].submit()">
<form method="post" action="${acs}">
<input type="hidden" name="SAMLResponse" value="${Buffer.from(lastResponse).toString("base64")}"/>
<input type="hidden" name="RelayState" value="${url.searchParams.get("RelayState") ?? ""}"/>
</form></body></html>`;
    res.writeHead(200, { "content-type": "text/html" }).end(form);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function responseXml(
    p: ResponsePlan,
    req: { requestId: string; acs: string; spEntity: string; n: number },
  ) {
    const now = Date.now();
    const at = (s: number) => new Date(now + s * 1000).toISOString();
    const assertionId = p.assertionId ?? `_a${req.n}x${now}`;
    const from = at(p.validFrom ?? -30);
    const until = at(p.validUntil ?? 300);
    const assertion = `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${at(0)}"><saml:Issuer>${entityId}</saml:Issuer><saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${p.email}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${req.requestId}" NotOnOrAfter="${until}" Recipient="${p.recipient ?? req.acs}"/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotBefore="${from}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${p.audience ?? req.spEntity}</saml:Audience></saml:AudienceRestriction></saml:Conditions><saml:AuthnStatement AuthnInstant="${at(0)}" SessionIndex="${assertionId}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement></saml:Assertion>`;
    const key = p.key ?? keys.current;
    const signedAssertion = p.signAssertion === false ? assertion : sign(assertion, "Assertion", key);
    let response = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${req.n}x${now}" Version="2.0" IssueInstant="${at(0)}" Destination="${req.acs}" InResponseTo="${req.requestId}"><saml:Issuer>${entityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${signedAssertion}</samlp:Response>`;
    if (p.signResponse) response = sign(response, "Response", key);
    return p.afterSigning ? p.afterSigning(response) : response;
  }

  return {
    entityId,
    ssoUrl: `${base}/sso`,
    keys,
    /** How the next Responses are made, until changed. */
    next(p: ResponsePlan) {
      plan = p;
    },
    lastResponse: () => lastResponse,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
