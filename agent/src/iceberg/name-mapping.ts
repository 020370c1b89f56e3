/**
 * Name mapping (spec "Column Projection", table property `schema.name-mapping.default`): for data
 * files written without field ids (imported Parquet, Hive tables), which column names stand for
 * which field id. Each entry maps one or more names to an id, nested entries map the fields of
 * structs, lists (`element`) and maps (`key`, `value`). An entry may have no id: the names are then
 * known but belong to no field.
 *
 * @example
 * const mapping = nameMapping(table); // null when the table has none
 * mapping && mappedFieldId(mapping, ["profile", "email"]); // 10
 */
import { z } from "zod";
import { IcebergError } from "./errors.ts";
import type { IcebergTable } from "./table.ts";

export const NAME_MAPPING_PROPERTY = "schema.name-mapping.default";

export interface MappedField {
  fieldId: number | null;
  names: string[];
  fields: MappedField[];
}

export type NameMapping = MappedField[];

type MappedFieldJson = { "field-id"?: number | null; names: string[]; fields?: MappedFieldJson[] | null };

const MappedFieldJson: z.ZodType<MappedFieldJson> = z.lazy(() =>
  z.object({
    "field-id": z.number().int().nullish(),
    names: z.array(z.string()),
    fields: z.array(MappedFieldJson).nullish(),
  }),
);

/** Parses a name mapping's JSON text. */
export function parseNameMapping(text: string): NameMapping {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new IcebergError(
      "corrupt",
      `${NAME_MAPPING_PROPERTY} is not valid JSON: ${(err as Error).message}`,
    );
  }
  const result = z.array(MappedFieldJson).safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new IcebergError(
      "corrupt",
      `${NAME_MAPPING_PROPERTY} is not a name mapping: ${issue?.path.join(".")}: ${issue?.message}`,
    );
  }
  const convert = (f: MappedFieldJson): MappedField => ({
    fieldId: f["field-id"] ?? null,
    names: f.names,
    fields: (f.fields ?? []).map(convert),
  });
  return result.data.map(convert);
}

/** The table's default name mapping, or null when it has none. */
export function nameMapping(table: IcebergTable): NameMapping | null {
  const text = table.metadata.properties[NAME_MAPPING_PROPERTY];
  return text === undefined ? null : parseNameMapping(text);
}

/** The field id a column path (`["profile", "email"]`) maps to, or null where the mapping has none. */
export function mappedFieldId(mapping: NameMapping, path: readonly string[]): number | null {
  let level: MappedField[] = mapping;
  let found: MappedField | undefined;
  for (const name of path) {
    found = level.find((f) => f.names.includes(name));
    if (!found) return null;
    level = found.fields;
  }
  return found?.fieldId ?? null;
}
