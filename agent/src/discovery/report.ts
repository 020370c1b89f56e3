/**
 * Finds the S3 Inventory report a discovery reads, as AWS writes one under a configuration's
 * folder (`<destination-prefix>/<source-bucket>/<configuration-id>/`):
 *
 * - `<YYYY-MM-DDTHH-MMZ>/manifest.json` lists the data files (`files[].key`, bucket-relative, under
 *   the folder's `data/`), and `manifest.checksum` beside it holds the manifest's MD5. A report is
 *   complete when its checksum exists and matches; AWS writes the checksum last, so a report still
 *   being written, or a torn one, is passed over for the next older one.
 * - The inventory URI names the configuration's folder (the newest complete report is read) or one
 *   `manifest.json` (that report, which must be complete too).
 * - Data file keys are bucket-relative; they are read through a store rooted at the configuration's
 *   folder (which the allow list covers), so a key must lie under it: `<folder's tail>/data/...`.
 * - Only Parquet reports are read; ORC and CSV fail for good, naming the format.
 */
import { createHash } from "node:crypto";
import { type DiscoveryBin, DiscoveryBinSchema } from "@lakesmith/shared/discovery";
import { parseLocation } from "@lakesmith/shared/locations";
import { z } from "zod";
import { JobError } from "../registry.ts";
import { type ObjectStore, readAll, StoreError } from "../store/index.ts";

const REPORT_KEY = /^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}Z)\/manifest\.json$/;

const ManifestSchema = z.object({
  sourceBucket: z.string().min(1),
  fileFormat: z.string(),
  creationTimestamp: z.union([z.string(), z.number()]).optional(),
  files: z.array(z.object({ key: z.string().min(1), size: z.number().int().nonnegative() })),
});

export interface InventoryReport {
  /** The manifest's URI. */
  uri: string;
  sourceBucket: string;
  createdMs: number | null;
  bins: DiscoveryBin[];
  /** Newer reports passed over as incomplete. */
  incomplete: string[];
}

/**
 * The report to read: the named manifest, or the newest complete one under the folder. `store` is
 * rooted at `inventoryRoot(inventoryUri)`. Fails for good when there is none.
 */
export async function findReport(store: ObjectStore, inventoryUri: string): Promise<InventoryReport> {
  const trimmed = inventoryUri.replace(/\/+$/, "");
  if (trimmed.endsWith("/manifest.json")) {
    const key = trimmed.split("/").slice(-2).join("/");
    const report = await readReport(store, key);
    if (typeof report === "string")
      throw new JobError(`the inventory report ${store.uriOf(key)} is incomplete: ${report}`, {
        retryable: false,
      });
    return { ...report, incomplete: [] };
  }
  const keys: string[] = [];
  for await (const object of store.list()) if (REPORT_KEY.test(object.key)) keys.push(object.key);
  // The folder names are UTC times of one fixed width: newest first is reverse string order.
  keys.sort().reverse();
  const incomplete: string[] = [];
  for (const key of keys) {
    const report = await readReport(store, key);
    if (typeof report !== "string") return { ...report, incomplete };
    incomplete.push(`${store.uriOf(key)}: ${report}`);
  }
  throw new JobError(
    `no complete S3 Inventory report under ${store.uri} (a <YYYY-MM-DDTHH-MMZ>/manifest.json with a matching manifest.checksum)` +
      (incomplete.length > 0 ? `; passed over: ${incomplete.join("; ")}` : ""),
    { retryable: false },
  );
}

/** The report at `key`, or why it is incomplete. */
async function readReport(
  store: ObjectStore,
  key: string,
): Promise<Omit<InventoryReport, "incomplete"> | string> {
  const checksumKey = key.replace(/manifest\.json$/, "manifest.checksum");
  const checksum = await readText(store, checksumKey);
  if (checksum === undefined) return "no manifest.checksum";
  const manifest = await readBytes(store, key);
  if (manifest === undefined) return "no manifest.json";
  const md5 = createHash("md5").update(manifest).digest("hex");
  const expected = checksum.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  if (md5 !== expected)
    return `manifest.checksum ${expected || "(empty)"} does not match the manifest's MD5 ${md5}`;
  let parsed: z.infer<typeof ManifestSchema>;
  try {
    parsed = ManifestSchema.parse(JSON.parse(manifest.toString("utf8")));
  } catch (err) {
    throw new JobError(`${store.uriOf(key)} is not an S3 Inventory manifest: ${(err as Error).message}`, {
      retryable: false,
    });
  }
  if (parsed.fileFormat.toLowerCase() !== "parquet")
    throw new JobError(
      `${store.uriOf(key)} is a ${parsed.fileFormat} inventory; only Parquet inventories are supported`,
      { retryable: false },
    );
  const created = Number(parsed.creationTimestamp);
  return {
    uri: store.uriOf(key),
    sourceBucket: parsed.sourceBucket,
    createdMs: Number.isFinite(created) ? created : null,
    bins: binsOf(store, parsed.files),
  };
}

/** Each data file as a bin: its id (file name without `.parquet`) and its key under the store. */
function binsOf(store: ObjectStore, files: { key: string; size: number }[]): DiscoveryBin[] {
  const folder = parseLocation(store.uri).segments.join("/");
  const seen = new Set<string>();
  return files.map((file, index) => {
    const rooted = `/${file.key}`;
    const at = rooted.lastIndexOf("/data/");
    const tail = rooted.slice(1, Math.max(1, at));
    if (at < 0 || !(folder === tail || folder.endsWith(`/${tail}`)))
      throw new JobError(
        `the manifest lists ${file.key}, which is not under the report's folder ${store.uri}data/`,
        { retryable: false },
      );
    const key = rooted.slice(at + 1);
    const name = key.slice(key.lastIndexOf("/") + 1).replace(/\.parquet$/i, "");
    const id = seen.has(name) ? `${name}-${index}` : name;
    seen.add(id);
    return DiscoveryBinSchema.parse({ id, key, size: file.size });
  });
}

async function readBytes(store: ObjectStore, key: string): Promise<Buffer | undefined> {
  try {
    return await readAll(await store.read(key));
  } catch (err) {
    if (err instanceof StoreError && err.code === "not_found") return undefined;
    throw err;
  }
}

async function readText(store: ObjectStore, key: string): Promise<string | undefined> {
  return (await readBytes(store, key))?.toString("utf8");
}
