/**
 * A connection's credentials between the wire, the database and a job's payload.
 *
 * - The wire takes every type's fields flat beside `type`; a field of another type, a missing
 *   required one or a malformed one is a 422 naming it. What is valid is the shared contract
 *   (`CatalogCredentialsSchema`), plus two rules of ours: a workspace's `client_id` and
 *   `client_secret` come together or not at all, and never beside a `token`; every URL is one an
 *   agent's `--allow-endpoints` can name (`endpointKey`), http(s) but for the metastore's thrift.
 * - Stored: the type's secret fields (`SECRET_FIELDS`) as one JSON object encrypted under
 *   `catalog_connections/<id>`, the other fields as plain JSON. Only a job's payload (for the
 *   agent) ever holds them decrypted.
 */
import {
  CATALOG_TYPES,
  type CatalogCredentials,
  CatalogCredentialsSchema,
  type CatalogType,
  catalogEndpoints,
  HiveMetastoreCredentialsSchema,
  PolarisCredentialsSchema,
  SECRET_FIELDS,
  WorkspaceCredentialsSchema,
} from "@lakesmith/shared/catalogs";
import { endpointKey, LocationError } from "@lakesmith/shared/locations";
import { ApiError, type FieldError } from "../http/problem.ts";
import type { Keyring } from "../secrets/keyring.ts";
import { catalogConnectionAad } from "../secrets/stored.ts";

/** Each type's credential fields besides `type`, as the shared contract names them. */
export const TYPE_FIELDS: Record<CatalogType, readonly string[]> = {
  workspace: Object.keys(WorkspaceCredentialsSchema.shape).filter((k) => k !== "type"),
  hive_metastore: Object.keys(HiveMetastoreCredentialsSchema.shape).filter((k) => k !== "type"),
  polaris: Object.keys(PolarisCredentialsSchema.shape).filter((k) => k !== "type"),
};

/** Every type's credential fields, once each. */
export const CREDENTIAL_FIELDS = [...new Set(CATALOG_TYPES.flatMap((t) => TYPE_FIELDS[t]))];

/** Every secret field of any type. */
export const ALL_SECRET_FIELDS = [...new Set(CATALOG_TYPES.flatMap((t) => SECRET_FIELDS[t]))];

/** The URL fields, and the scheme each must have. */
const URL_SCHEMES: Record<string, readonly string[]> = {
  workspace_url: ["http", "https"],
  catalog_url: ["http", "https"],
  token_url: ["http", "https"],
  metastore_uri: ["thrift"],
};

/** Credential fields as a request carries them: a value, null (clear it, on update) or absent. */
export type CredentialFields = Partial<Record<string, string | null>>;

/**
 * The credentials of a `type` connection from flat fields; a 422 naming every field that is of
 * another type, missing or malformed. Null fields count as absent.
 */
export function credentialsFrom(type: CatalogType, fields: CredentialFields): CatalogCredentials {
  const own = TYPE_FIELDS[type];
  const problems: FieldError[] = [];
  const values: Record<string, string> = {};
  for (const field of CREDENTIAL_FIELDS) {
    const value = fields[field];
    if (value === undefined || value === null) continue;
    if (!own.includes(field)) {
      problems.push({
        path: field,
        message: `is not a field of a ${type} connection (its fields: ${own.join(", ")})`,
      });
      continue;
    }
    values[field] = value;
  }
  const parsed = CatalogCredentialsSchema.safeParse({ type, ...values });
  if (!parsed.success)
    for (const issue of parsed.error.issues)
      problems.push({
        path: issue.path.map(String).join(".") || "type",
        message: issue.code === "invalid_type" && issue.input === undefined ? "required" : issue.message,
      });
  const flagged = new Set(problems.map((p) => p.path));
  problems.push(
    ...[...workspaceAuthProblems(type, values), ...urlProblems(values)].filter((p) => !flagged.has(p.path)),
  );
  if (problems.length > 0)
    throw new ApiError(422, problems.map((p) => `${p.path}: ${p.message}`).join("; "), problems);
  return parsed.data as CatalogCredentials;
}

function workspaceAuthProblems(type: CatalogType, values: Record<string, string>): FieldError[] {
  if (type !== "workspace") return [];
  const { client_id: id, client_secret: secret, token } = values;
  if (token !== undefined && (id !== undefined || secret !== undefined))
    return [
      {
        path: "token",
        message:
          "give either a token or client_id and client_secret, not both (send null to clear the other)",
      },
    ];
  if (id !== undefined && secret === undefined)
    return [{ path: "client_secret", message: "required with client_id" }];
  if (secret !== undefined && id === undefined)
    return [{ path: "client_id", message: "required with client_secret" }];
  return [];
}

function urlProblems(values: Record<string, string>): FieldError[] {
  const problems: FieldError[] = [];
  for (const [field, schemes] of Object.entries(URL_SCHEMES)) {
    const value = values[field];
    if (value === undefined) continue;
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(value)?.[1]?.toLowerCase();
    if (!scheme || !schemes.includes(scheme)) {
      problems.push({ path: field, message: `must be ${schemes.join(" or ")}://...` });
      continue;
    }
    try {
      endpointKey(value);
    } catch (err) {
      if (!(err instanceof LocationError)) throw err;
      problems.push({ path: field, message: err.message.replace(`endpoint '${value}'`, "the endpoint") });
    }
  }
  return problems;
}

/**
 * The endpoints a connection's jobs reach, as an agent's `--allow-endpoints` must name them: the
 * catalog's, and a Polaris token URL's (the agent's handler checks the same two).
 */
export function endpointsOf(credentials: CatalogCredentials): string[] {
  return [...new Set(catalogEndpoints(credentials).map(endpointKey))];
}

/** The credentials split into what is stored plain and what is stored encrypted. */
export function splitCredentials(credentials: CatalogCredentials): {
  settings: Record<string, string>;
  secrets: Record<string, string>;
} {
  const secretFields = SECRET_FIELDS[credentials.type];
  const settings: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const [field, value] of Object.entries(credentials)) {
    if (field === "type" || typeof value !== "string") continue;
    (secretFields.includes(field) ? secrets : settings)[field] = value;
  }
  return { settings, secrets };
}

/** The secret fields as stored: one envelope, bound to the connection's id. */
export function sealSecrets(keyring: Keyring, connectionId: string, secrets: Record<string, string>) {
  return keyring.encrypt(JSON.stringify(secrets), catalogConnectionAad(connectionId));
}

/** The secret fields of a stored connection. */
export async function openSecrets(
  keyring: Keyring,
  row: { id: string; secrets: string },
): Promise<Record<string, string>> {
  return JSON.parse(await keyring.decrypt(row.secrets, catalogConnectionAad(row.id))) as Record<
    string,
    string
  >;
}
