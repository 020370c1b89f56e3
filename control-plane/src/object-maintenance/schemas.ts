/**
 * Wire shapes of object maintenance (document 1, "Object maintenance"): locations (LocationCreate,
 * LocationUpdate), managed prefixes, and prefix policies (PolicyUpsert, which document 1 leaves
 * to us: defined here and in the OpenAPI description).
 */
import { z } from "@hono/zod-openapi";
import { LOCATION_STATUSES, MANAGEMENT_STATES, SOURCE_STATES } from "../db/schema.ts";
import { pageQuery } from "../http/pagination.ts";

export const LOCATION_PAGE_MAX = 1000;
export const PREFIX_PAGE_MAX = 1000;
/** Schemes a location may name (`file` for the embedded default: a local agent's folder). */
export const LOCATION_SCHEMES = ["s3", "gs", "azure", "file"] as const;

const NOT_YET = "not yet supported";

export const LocationIdParam = z.object({
  location_id: z.string().min(1).max(64).openapi({ example: "loc_4k9x2m7q0c1v8b3n5z6t" }),
});
export const PrefixIdParam = z.object({
  prefix_id: z.string().min(1).max(64).openapi({ example: "pfx_4k9x2m7q0c1v8b3n5z6t" }),
});
export const LocationPrefixParams = LocationIdParam.merge(PrefixIdParam);

const UriSchema = z.string().min(1).max(2048).openapi({
  description:
    "`s3://bucket/path`, `gs://bucket/path`, `azure://account/container/path`, or `file:///path` (a local agent's folder, the embedded default). Stored canonically, without a trailing `/`.",
  example: "s3://lake/landing/events",
});

const locationFields = {
  description: z.string().max(500).nullable().optional().openapi({ description: "At most 500 characters." }),
  discovery_cadence: z
    .enum(["daily", "weekly"])
    .optional()
    .openapi({ description: "How often discovery runs (inventory_report). Default daily." }),
  skip_age_days: z.number().int().min(0).max(365).optional().openapi({
    description:
      "Files younger than this many days are left out of discovery and conversion. 0-365, default 2.",
  }),
};

export const LocationCreateSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(100)
      .openapi({ description: "Unique; at most 100 characters.", example: "landing" }),
    ...locationFields,
    uri: UriSchema,
    discovery_method: z
      .enum(["use_as_registered", "inventory_report", "direct_listing"])
      .default("use_as_registered")
      .openapi({
        description:
          "use_as_registered (default): the URI is one exact prefix; no discovery, the location is Active at once with that one managed prefix. " +
          `inventory_report: discovery reads the bucket's inventory report (inventory_uri). direct_listing: ${NOT_YET} (422).`,
      }),
    inventory_uri: UriSchema.optional().openapi({
      description: "inventory_report (required): the inventory report's folder or its `manifest.json`.",
      example: "s3://lake-inventory/lake/daily",
    }),
    inventory_format: z
      .enum(["parquet", "orc", "csv"])
      .optional()
      .openapi({ description: `inventory_report: parquet (default); orc and csv are ${NOT_YET} (422).` }),
    run_discovery_immediately: z.boolean().optional().openapi({
      description:
        "inventory_report: queue a discovery at once (default true). Ignored for use_as_registered.",
    }),
    input_format: z
      .enum(["json", "parquet"])
      .default("json")
      .openapi({
        description: `The raw files' format: json (default, newline-delimited or arrays, gzip too); parquet is ${NOT_YET} (422).`,
      }),
  })
  .openapi("LocationCreate");
export type LocationCreate = z.infer<typeof LocationCreateSchema>;

export const LocationUpdateSchema = z
  .strictObject({
    name: z.string().min(1).max(100).optional(),
    ...locationFields,
    status: z
      .enum(LOCATION_STATUSES)
      .optional()
      .openapi({
        description:
          "Archived archives the location (the console's action): it is no longer processed (no discovery, its prefixes' policies do not run) and nothing is deleted. " +
          "Active on an archived location un-archives it back to the status it had. Other values are a 422: Pending, Discovering and Active are the system's to set.",
      }),
  })
  .openapi("LocationUpdate", {
    description:
      "Any subset. The URI, discovery method and inventory settings never change: register another location instead.",
  });
export type LocationUpdate = z.infer<typeof LocationUpdateSchema>;

export const LocationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    uri: z.string(),
    discovery_method: z.enum(["use_as_registered", "inventory_report"]),
    inventory_uri: z.string().nullable(),
    inventory_format: z.enum(["parquet"]).nullable(),
    discovery_cadence: z.enum(["daily", "weekly"]),
    skip_age_days: z.number().int(),
    run_discovery_immediately: z.boolean(),
    input_format: z.enum(["json"]),
    status: z.enum(LOCATION_STATUSES).openapi({
      description:
        "Pending (registered; discovery not yet run), Discovering (a discovery is running; inventory_report), Active (its prefixes are known: at once for use_as_registered), Archived (no longer processed; nothing deleted).",
    }),
    prefixes: z.number().int().openapi({ description: "Managed prefixes of the location." }),
    last_discovered_at: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Location");

export const LocationListQuery = pageQuery(100, LOCATION_PAGE_MAX).extend({
  status: z.enum(LOCATION_STATUSES).optional(),
});

const MANAGEMENT_DESCRIPTION =
  "unmanaged: known, nothing runs; active: its policy's actions run; paused: its location is archived (un-archiving resumes it); " +
  "error: a run of its policy failed for good (`state_reason`); enable retries it. " +
  "Enable moves unmanaged, paused (when the location is no longer archived) and error to active; a PUT of the policy activates an unmanaged prefix.";

export const PrefixSchema = z
  .object({
    id: z.string(),
    location_id: z
      .string()
      .nullable()
      .openapi({ description: "Null once the location was deleted; the prefix is kept." }),
    uri: z.string(),
    management_state: z.enum(MANAGEMENT_STATES).openapi({ description: MANAGEMENT_DESCRIPTION }),
    state_reason: z.string().nullable(),
    source_state: z.enum(SOURCE_STATES).openapi({
      description:
        "present: the latest discovery (or registration) found it; missing: the latest completed discovery of its location did not (since `missing_since`).",
    }),
    missing_since: z.string().nullable(),
    files: z.number().int().nullable(),
    bytes: z.number().int().nullable(),
    newest_object_at: z.string().nullable(),
    discovered_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("ManagedPrefix");

export const PrefixListQuery = pageQuery(100, PREFIX_PAGE_MAX).extend({
  location_id: z.string().min(1).max(64).optional(),
  management_state: z.enum(MANAGEMENT_STATES).optional(),
  source_state: z.enum(SOURCE_STATES).optional(),
});

const RunTimeSchema = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, "HH:MM, 00:00 to 23:59")
  .openapi({ example: "02:30" });

export const PolicyUpsertSchema = z
  .strictObject({
    convert: z
      .strictObject({
        enabled: z.boolean().default(true),
        target_prefix: UriSchema.openapi({
          description: "Where the Parquet files go: a prefix outside the source prefix, on the same store.",
          example: "s3://lake/curated/events",
        }),
        cadence: z.enum(["daily", "weekly"]).default("daily"),
        run_time_utc: RunTimeSchema.default("02:00"),
        target_file_size_mb: z.number().int().min(8).max(4096).default(128),
      })
      .optional()
      .openapi({
        description:
          "Convert the prefix's JSON files to Parquet under `target_prefix` at the cadence and time (UTC): each run converts only inputs not converted yet and older than the location's skip age.",
      }),
    remove_inputs: z
      .strictObject({
        enabled: z.boolean().default(true),
        retention_days: z.number().int().min(0).max(3650).default(30),
      })
      .optional()
      .openapi({
        description:
          "Propose converted inputs for deletion `retention_days` after their conversion, as pending deletions (recoverable until hard-deleted). Needs `convert`.",
      }),
  })
  .refine((p) => p.convert !== undefined || p.remove_inputs === undefined, {
    message: "remove_inputs needs convert: only converted inputs are removed",
    path: ["remove_inputs"],
  })
  .openapi("PolicyUpsert", {
    description:
      "What runs on a prefix. Each PUT appends a new version and deactivates the previous one atomically; the body replaces the policy as a whole.",
  });
export type PolicyUpsert = z.infer<typeof PolicyUpsertSchema>;

export const PolicySchema = z
  .object({
    prefix_id: z.string(),
    version: z.number().int().openapi({ description: "1 for the first PUT, then one more per PUT." }),
    active: z.boolean(),
    policy: z
      .record(z.string(), z.unknown())
      .openapi({ description: "The PolicyUpsert as stored, defaults filled in." }),
    created_by: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("PrefixPolicy");

export const PrefixDetailSchema = PrefixSchema.extend({
  location: z
    .object({ id: z.string(), name: z.string(), uri: z.string(), status: z.enum(LOCATION_STATUSES) })
    .nullable()
    .openapi({ description: "The parent location's summary; null once it was deleted." }),
  policy: PolicySchema.nullable().openapi({ description: "The active policy version, if any." }),
}).openapi("ManagedPrefixDetail");

export const PolicyVersionsQuery = pageQuery(50, 1000);
