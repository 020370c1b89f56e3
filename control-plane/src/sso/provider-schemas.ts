/**
 * The wire shapes of the installation's two identity providers (`/api/v1/sso/oidc`, `/saml`).
 *
 * - Addresses are https; plain http only on a loopback host (a provider on the same machine, tests).
 * - The OIDC client secret is write-only: answers say `has_client_secret`, never the value.
 * - IdP certificates are public keys, shown as sent; two are allowed so a rotation can overlap.
 */
import { z } from "@hono/zod-openapi";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether a URL is https, or http on a loopback host. */
export function isSecureOrLoopback(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname));
  } catch {
    return false;
  }
}

const providerUrl = z
  .url()
  .max(2048)
  .refine(isSecureOrLoopback, { message: "must be https:// (http:// only on localhost or 127.0.0.1)" });

const PEM_CERTIFICATE = /^-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=]+\s*)+-----END CERTIFICATE-----\s*$/;
const certificate = z
  .string()
  .max(16_384)
  .transform((pem) => pem.trim())
  .refine((pem) => PEM_CERTIFICATE.test(pem), {
    message: "must be one PEM certificate (-----BEGIN CERTIFICATE----- ...)",
  });

const updatedAt = z.string().openapi({ description: "When the provider was last saved." });

export const OidcProviderSchema = z
  .object({
    issuer: z
      .string()
      .openapi({ description: "The issuer; discovery reads `<issuer>/.well-known/openid-configuration`." }),
    client_id: z.string(),
    scopes: z
      .string()
      .openapi({ description: "Space-separated scopes requested; always includes `openid` and `email`." }),
    has_client_secret: z
      .boolean()
      .openapi({ description: "Whether a client secret is stored; the secret itself is never returned." }),
    updated_at: updatedAt,
  })
  .openapi("OidcProvider");

export const OidcProviderUpdateSchema = z
  .strictObject({
    issuer: providerUrl,
    client_id: z.string().min(1).max(256),
    client_secret: z.string().min(1).max(1024).nullable().optional().openapi({
      description:
        "Stored encrypted under the secrets key. Omitted: the stored secret is kept; null: cleared (a public client, PKCE only).",
    }),
    scopes: z
      .string()
      .max(512)
      .regex(/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/, "space-separated scope names")
      .refine((s) => s.split(" ").includes("openid") && s.split(" ").includes("email"), {
        message: "must include openid and email",
      })
      .default("openid email profile"),
  })
  .openapi("OidcProviderUpdate");
export type OidcProviderUpdate = z.infer<typeof OidcProviderUpdateSchema>;

export const SamlProviderSchema = z
  .object({
    idp_sso_url: z.string().openapi({ description: "The IdP's single sign-on URL (HTTP-Redirect binding)." }),
    idp_entity_id: z.string().openapi({ description: "The IdP's entity id; the `Issuer` of its responses." }),
    idp_certificates: z
      .array(z.string())
      .openapi({ description: "PEM certificates the IdP signs with; one or two (rotation)." }),
    sp_entity_id: z
      .string()
      .openapi({ description: "This service provider's entity id: the audience assertions must name." }),
    require_signed_response: z
      .boolean()
      .openapi({ description: "Whether the Response must be signed too; assertions must always be signed." }),
    updated_at: updatedAt,
  })
  .openapi("SamlProvider");

export const SamlProviderUpdateSchema = z
  .strictObject({
    idp_sso_url: providerUrl,
    idp_entity_id: z.string().min(1).max(1024),
    idp_certificates: z.array(certificate).min(1).max(2),
    sp_entity_id: z.string().min(1).max(1024).nullable().optional().openapi({
      description:
        "Defaults to the metadata address, `<console_public_url or request origin>/api/v1/auth/sso/saml/metadata`.",
    }),
    require_signed_response: z.boolean().default(false),
  })
  .openapi("SamlProviderUpdate");
export type SamlProviderUpdate = z.infer<typeof SamlProviderUpdateSchema>;
