/**
 * The installation's identity providers: one OIDC and one SAML 2.0 provider at most, one row each
 * in `sso_providers`. Settings are plain JSON; the OIDC client secret is encrypted under the secrets
 * key (name `sso_providers/oidc`) and rotated with the other stored secrets (`secrets/stored.ts`).
 */
import type { Clock } from "@lakesmith/shared";
import { eq } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type SsoProtocol, ssoProviders } from "../db/schema.ts";
import { ApiError } from "../http/problem.ts";
import type { Keyring } from "../secrets/keyring.ts";
import { ssoProviderAad } from "../secrets/stored.ts";
import type { OidcProviderUpdate, SamlProviderUpdate } from "./provider-schemas.ts";

export interface OidcProvider {
  issuer: string;
  clientId: string;
  scopes: string;
  /** Decrypted: for the token request only, never for an answer. */
  clientSecret: string | null;
  updatedAt: Date;
}

export interface SamlProvider {
  idpSsoUrl: string;
  idpEntityId: string;
  idpCertificates: string[];
  /** Null: the metadata address (`saml-routes.ts`). */
  spEntityId: string | null;
  requireSignedResponse: boolean;
  updatedAt: Date;
}

const notConfigured = (protocol: SsoProtocol) =>
  new ApiError(
    404,
    `No ${protocol === "oidc" ? "OIDC" : "SAML"} provider is configured; an Admin sets one with PUT /api/v1/sso/${protocol}.`,
  );

export class SsoProviders {
  constructor(
    private readonly db: Db,
    private readonly secrets: Keyring,
    private readonly clock: Clock,
  ) {}

  /** The OIDC provider, or 404 saying how to configure one. */
  async oidc(): Promise<OidcProvider> {
    const row = await this.row("oidc");
    const settings = JSON.parse(row.settings) as { issuer: string; client_id: string; scopes: string };
    return {
      issuer: settings.issuer,
      clientId: settings.client_id,
      scopes: settings.scopes,
      clientSecret: row.secret ? await this.secrets.decrypt(row.secret, ssoProviderAad("oidc")) : null,
      updatedAt: row.updatedAt,
    };
  }

  /** The SAML provider, or 404 saying how to configure one. */
  async saml(): Promise<SamlProvider> {
    const row = await this.row("saml");
    const s = JSON.parse(row.settings) as Omit<SamlProviderUpdate, "sp_entity_id"> & {
      sp_entity_id: string | null;
    };
    return {
      idpSsoUrl: s.idp_sso_url,
      idpEntityId: s.idp_entity_id,
      idpCertificates: s.idp_certificates,
      spEntityId: s.sp_entity_id,
      requireSignedResponse: s.require_signed_response,
      updatedAt: row.updatedAt,
    };
  }

  /** Saves the OIDC provider; an omitted `client_secret` keeps the stored one, null clears it. */
  async putOidc(input: OidcProviderUpdate, actor: string): Promise<OidcProvider> {
    const { client_secret: secret, ...settings } = input;
    const [stored] = await this.db
      .select({ secret: ssoProviders.secret })
      .from(ssoProviders)
      .where(eq(ssoProviders.protocol, "oidc"));
    const sealed =
      secret === undefined
        ? (stored?.secret ?? null)
        : secret === null
          ? null
          : await this.secrets.encrypt(secret, ssoProviderAad("oidc"));
    await this.write("oidc", settings, sealed, actor);
    return this.oidc();
  }

  async putSaml(input: SamlProviderUpdate, actor: string): Promise<SamlProvider> {
    await this.write("saml", { ...input, sp_entity_id: input.sp_entity_id ?? null }, null, actor);
    return this.saml();
  }

  /** Removes a provider; its users can no longer log in. 404 when there is none. */
  async remove(protocol: SsoProtocol): Promise<void> {
    const gone = await this.db
      .delete(ssoProviders)
      .where(eq(ssoProviders.protocol, protocol))
      .returning({ protocol: ssoProviders.protocol });
    if (gone.length === 0) throw notConfigured(protocol);
  }

  private async row(protocol: SsoProtocol) {
    const [row] = await this.db.select().from(ssoProviders).where(eq(ssoProviders.protocol, protocol));
    if (!row) throw notConfigured(protocol);
    return row;
  }

  private async write(protocol: SsoProtocol, settings: object, secret: string | null, actor: string) {
    const values = {
      settings: JSON.stringify(settings),
      secret,
      updatedAt: this.clock.now(),
      updatedBy: actor,
    };
    await this.db
      .insert(ssoProviders)
      .values({ protocol, ...values })
      .onConflictDoUpdate({ target: ssoProviders.protocol, set: values });
  }
}
