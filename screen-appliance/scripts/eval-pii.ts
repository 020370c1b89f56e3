/**
 * The PII half of `npm run eval:screen`: runs the appliance's detectors (the same `detect` the
 * service uses, default thresholds) over the Presidio synthetic records whose templates were held
 * out of training, and scores each type by span matching.
 */
import { detect, type PersonNameFinder } from "../src/detect/detect.ts";
import {
  CLASSIFICATION_TYPES,
  type ClassificationType,
  DEFAULT_MIN_LIKELIHOOD,
  type Likelihood,
} from "../src/detect/types.ts";
import {
  evaluateInternationalAddresses,
  postalAddressSpans,
  printInternationalAddresses,
} from "./lib/address-templates.ts";
import { BOOTSTRAP_DRAWS, bootstrapInterval, formatInterval, type Interval } from "./lib/bootstrap.ts";
import { readPresidioRecords, readTemplates, templateSplit } from "./lib/datasets.ts";
import { NameHoldout } from "./lib/name-holdout.ts";
import { add, type Counts, matchSpans, scores } from "./lib/spans.ts";

/** Presidio's entity names for the types the appliance detects. */
const GOLD_TYPES: Partial<Record<string, ClassificationType>> = {
  PERSON: "PERSON_NAME",
  EMAIL_ADDRESS: "EMAIL",
  PHONE_NUMBER: "PHONE_NUMBER",
  CREDIT_CARD: "CREDIT_CARD_NUMBER",
  US_SSN: "US_SOCIAL_SECURITY_NUMBER",
  IP_ADDRESS: "IP_ADDRESS",
  IBAN_CODE: "IBAN_CODE",
  STREET_ADDRESS: "STREET_ADDRESS",
};

/** Where the PERSON_NAME figures come from, printed with them. */
export function personNameProvenance(): string {
  return (
    "PERSON_NAME provenance: Presidio's records of templates index % 5 == 2, whose sentences training never " +
    `uses. Their people come from fake_people_3000.csv; ${new NameHoldout().describe()}. These records were ` +
    "read while developing the models (their false findings were printed to find classes of error)."
  );
}

export interface PiiRow {
  type: ClassificationType;
  gold: number;
  exact: Counts;
  overlap: Counts;
  /** The same counts per template, for the bootstrap intervals (templates are drawn whole). */
  byTemplate: Map<number, { exact: Counts; overlap: Counts }>;
}

/**
 * The split relies on each record's template_id naming the template line it was generated from.
 * To check that, the template becomes a regular expression (placeholders match any text, case
 * and whitespace are loose, since the generator lower-cases some sentences) that the record's text
 * must match.
 */
function templatePattern(template: string): RegExp {
  const literal = template
    .replace(/\\n/g, "\n")
    .split(/\{\{\w+\}\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\s+/g, "\\s+"));
  return new RegExp(`^\\s*${literal.join("[\\s\\S]+?")}\\s*$`, "iu");
}

/**
 * `heldOut`: records of held-out templates, every type. `all`: every record, structured types
 * only; they are not trained on the templates, so all 1,500 records are fair game for them.
 */
export async function evaluatePii(names: PersonNameFinder, scope: "heldOut" | "all" = "heldOut") {
  const templates = readTemplates();
  const records = readPresidioRecords().filter(
    (r) => scope === "all" || templateSplit(r.templateId) === "test",
  );
  const types = CLASSIFICATION_TYPES.filter((t) => scope === "heldOut" || t !== "PERSON_NAME");
  const patterns = new Map<number, RegExp>();
  const mismatched = records.filter((r) => {
    const pattern = patterns.get(r.templateId) ?? templatePattern(templates[r.templateId] ?? "");
    patterns.set(r.templateId, pattern);
    return !pattern.test(r.text);
  }).length;
  const minimums = new Map<ClassificationType, Likelihood>(types.map((t) => [t, DEFAULT_MIN_LIKELIHOOD]));
  const rows = new Map<ClassificationType, PiiRow>(
    types.map((type) => [
      type,
      {
        type,
        gold: 0,
        exact: { tp: 0, fp: 0, fn: 0 },
        overlap: { tp: 0, fp: 0, fn: 0 },
        byTemplate: new Map(),
      },
    ]),
  );
  for (const record of records) {
    const findings = await detect(record.text, minimums, names);
    for (const [type, row] of rows) {
      // STREET_ADDRESS is the whole postal address: Presidio's parts of one address are one span.
      const gold =
        type === "STREET_ADDRESS"
          ? postalAddressSpans(record.text, record.spans)
          : record.spans.filter((s) => GOLD_TYPES[s.type] === type);
      const predicted = findings.filter((f) => f.type === type);
      const exact = matchSpans(record.text, gold, predicted, true);
      const overlap = matchSpans(record.text, gold, predicted, false);
      row.gold += gold.length;
      row.exact = add(row.exact, exact);
      row.overlap = add(row.overlap, overlap);
      const template = row.byTemplate.get(record.templateId) ?? { exact: NO_COUNTS, overlap: NO_COUNTS };
      row.byTemplate.set(record.templateId, {
        exact: add(template.exact, exact),
        overlap: add(template.overlap, overlap),
      });
    }
  }
  return {
    scope,
    records: records.length,
    templates: new Set(records.map((r) => r.templateId)).size,
    mismatched,
    rows: [...rows.values()],
    addresses: scope === "heldOut" ? await evaluateInternationalAddresses(names) : [],
  };
}

export function printPii(result: Awaited<ReturnType<typeof evaluatePii>>): void {
  console.log(
    result.scope === "all"
      ? `\nStructured detectors (no training) on all ${result.records} records from ${result.templates} templates`
      : `PII detection on ${result.records} records from ${result.templates} held-out templates ` +
          `(template_id checked by matching the template as a pattern: ${result.records - result.mismatched} match, ${result.mismatched} do not)`,
  );
  if (result.scope === "heldOut") console.log(personNameProvenance());
  console.log(
    "type                        gold  | exact span: P      R      F2    | overlap: P      R      F2",
  );
  for (const row of result.rows) {
    const e = scores(row.exact);
    const o = scores(row.overlap);
    if (row.gold === 0) {
      console.log(
        `${row.type.padEnd(27)}    0  |   no gold spans of this type in these records; ${row.exact.fp} predicted`,
      );
      continue;
    }
    console.log(
      `${row.type.padEnd(27)} ${String(row.gold).padStart(4)}  |   ${fmt(e.precision)} ${fmt(e.recall)} ${fmt(e.f2)}  |   ${fmt(o.precision)} ${fmt(o.recall)} ${fmt(o.f2)}`,
    );
  }
  console.log(
    "STREET_ADDRESS gold is one span per postal address: Presidio's street, unit, city, postcode and country " +
      "spans of one address are joined (scripts/lib/address-templates.ts)",
  );
  console.log(
    `F2 95% intervals (bootstrap: the ${result.templates} templates drawn with replacement, whole, ${BOOTSTRAP_DRAWS} draws), exact / overlap:`,
  );
  for (const row of result.rows) {
    if (row.gold === 0) continue;
    const exact = f2Interval(row, "exact");
    const overlap = f2Interval(row, "overlap");
    console.log(`  ${row.type.padEnd(25)} ${formatInterval(exact)} / ${formatInterval(overlap)}`);
  }
  if (result.addresses.length > 0) printInternationalAddresses(result.addresses);
}

const NO_COUNTS: Counts = { tp: 0, fp: 0, fn: 0 };

/** The F2 of a resample of whole templates: their counts summed. */
function f2Interval(row: PiiRow, match: "exact" | "overlap"): Interval {
  const templates = [...row.byTemplate.values()].map((t) => t[match]);
  return bootstrapInterval(templates.length, (indices) => {
    let total = NO_COUNTS;
    for (const i of indices) total = add(total, templates[i] as Counts);
    return total.tp + total.fn === 0 ? Number.NaN : scores(total).f2;
  });
}

const fmt = (n: number) => n.toFixed(3).padStart(6);
