/**
 * Environment configuration of the Node entry, parsed once by one zod schema. Every variable the
 * control plane reads is here; the README's configuration table lists the same.
 */
import { z } from "zod";
import { secretsKeyProblem } from "./secrets/key-text.ts";

const optionalSecret = z
  .string()
  .optional()
  .transform((v) => (v === "" ? undefined : v));

export const NodeEnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default("0.0.0.0"),
  LAKESMITH_DB_URL: z.string().default("file:./.lakesmith/lakesmith.db"),
  LAKESMITH_DB_AUTH_TOKEN: optionalSecret,
  LAKESMITH_JWT_SECRET: optionalSecret.refine(
    (v) => v === undefined || v.length >= 32,
    "at least 32 characters",
  ),
  /** 32 bytes in base64 that encrypt the stored secrets; unset: the key file beside an embedded database. */
  LAKESMITH_SECRETS_KEY: optionalSecret.superRefine((v, ctx) => {
    const problem = secretsKeyProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
  /** Comma-separated older keys, for decryption only, while stored secrets move to the current key. */
  LAKESMITH_SECRETS_KEY_PREVIOUS: optionalSecret.superRefine((v, ctx) => {
    const problem = secretsKeyProblem(v, true);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
  LAKESMITH_ADMIN_PASSWORD: optionalSecret.refine(
    (v) => v === undefined || v.length >= 8,
    "at least 8 characters",
  ),
  LAKESMITH_BREAKGLASS_PASSWORD: optionalSecret.refine(
    (v) => v === undefined || v.length >= 8,
    "at least 8 characters",
  ),
  LAKESMITH_ADMIN_API_KEY: optionalSecret,
  /** How many reverse proxies of our own append to X-Forwarded-For; 0 ignores the header. */
  LAKESMITH_TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  /** Start the local agent: on by default with an embedded database (`file:`), off otherwise. */
  LAKESMITH_LOCAL_AGENT: z.enum(["0", "1", ""]).optional(),
  /** SMTP server for notifications: `smtp://user:pass@host:587` or `smtps://...:465`. */
  LAKESMITH_SMTP_URL: optionalSecret.refine(
    (v) => v === undefined || /^smtps?:\/\/[^/]+/.test(v),
    "must be smtp://[user:password@]host[:port] or smtps://...",
  ),
  /** Or the server's parts: host, port (default 587; 465 means implicit TLS), user and password. */
  LAKESMITH_SMTP_HOST: optionalSecret,
  LAKESMITH_SMTP_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  LAKESMITH_SMTP_USER: optionalSecret,
  LAKESMITH_SMTP_PASSWORD: optionalSecret,
  /** The From address of notification emails. */
  LAKESMITH_SMTP_FROM: z.string().default("Lakesmith <lakesmith@localhost>"),
});
export type NodeEnv = z.infer<typeof NodeEnvSchema>;

/** Parses `process.env`-like input; throws one readable error listing every bad variable. */
export function parseNodeEnv(env: Record<string, string | undefined>): NodeEnv {
  const result = NodeEnvSchema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
  throw new Error(`Invalid environment:\n${lines.join("\n")}`);
}
