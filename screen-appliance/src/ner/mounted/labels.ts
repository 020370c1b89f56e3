/**
 * Reads a Hugging Face model's `id2label` as a tagging scheme: BIO/IOB2 (`B-PER`, `I-PER`),
 * BIOES/BILOU (`S-PER`, `E-PER`, `U-PER`, `L-PER`), plain IO (`PER`), with `-` or `_` after the
 * prefix. Entity types that mean a person become PERSON_NAME; every other type (LOC, ORG, MISC,
 * DATE...) is ignored, because the appliance's structured detectors own those.
 */
import { labelNames } from "../../ml/hf-export.ts";

/** Where a label puts its token inside an entity. */
export type Position = "begin" | "inside" | "end" | "single" | "outside";

export interface Label {
  /** The label as `config.json` writes it. */
  name: string;
  position: Position;
  /** The label names a person (mapped to PERSON_NAME). */
  person: boolean;
}

/**
 * Entity types read as a person's name. Besides the CoNLL and OntoNotes types this covers the
 * name parts of PII models (`B-FIRSTNAME`, `I-LASTNAME`).
 */
const PERSON_TYPES = new Set([
  "PER",
  "PERS",
  "PERSON",
  "PERSON_NAME",
  "PERSONNAME",
  "NAME",
  "FULLNAME",
  "FIRSTNAME",
  "GIVENNAME",
  "MIDDLENAME",
  "LASTNAME",
  "SURNAME",
  "FAMILYNAME",
]);

const PREFIXES: Record<string, Position> = {
  B: "begin",
  I: "inside",
  E: "end",
  L: "end",
  S: "single",
  U: "single",
};

/** `B-PER` → begin, person; `I-ORG` → inside, not a person; `O` → outside. */
export function parseLabel(name: string): Label {
  const trimmed = name.trim();
  if (trimmed === "" || /^o$/i.test(trimmed)) return { name, position: "outside", person: false };
  const match = /^([BIELSU])[-_](.+)$/i.exec(trimmed);
  const prefix = match?.[1]?.toUpperCase();
  const type = (match?.[2] ?? trimmed).toUpperCase().replace(/[\s-]/g, "_");
  // Plain IO labels ("PER") continue an entity of the same type, like I- does.
  const position = prefix ? (PREFIXES[prefix] ?? "inside") : "inside";
  return { name, position, person: PERSON_TYPES.has(type) || PERSON_TYPES.has(type.replace(/_/g, "")) };
}

/**
 * `config.json`'s `id2label` (object keyed by the id as a string) as an array indexed by id.
 * Throws when ids are missing or not 0..n-1, or when no label names a person.
 */
export function readLabels(id2label: unknown, source: string): Label[] {
  const labels = labelNames(id2label, source, "token-classification").map(parseLabel);
  if (!labels.some((l) => l.person)) {
    const names = labels.map((l) => l.name).join(", ");
    throw new Error(
      `${source}: none of the labels (${names}) names a person; expected a type such as PER or PERSON (B-PER, I-PER, PER...)`,
    );
  }
  return labels;
}
