/**
 * Reads a mounted text classifier's `id2label` as the appliance's bias or toxicity types, by name.
 *
 * - A label name is compared after NFKC, lowercasing and removing spaces, `_`, `-`, `/` and `.`:
 *   `identity_hate`, `Identity-Hate` and `identity hate` are the same name.
 * - Each family has a fixed table of names per type (below); our own type names are among them.
 * - A negative class names the absence of a category: `neutral`, `none`, `normal`, `neither`, `ok`,
 *   `safe`, `clean`, `acceptable`, `unbiased`, or `non`/`not`/`no` + a category word
 *   (`non-toxic`, `NOT-HATE`, `no_bias`). It maps to no type and is not reported as ignored.
 * - Every other label (`toxic`, `insult`, `gender`, `LABEL_1`...) is ignored and listed at start.
 *   General toxicity (`toxic`, `obscene`, `insult`, `offensive`) is deliberately not HATE: hate
 *   targets people for who they are, which is how the built-in HATE is trained (Davidson's
 *   "offensive" tweets are its negatives).
 * - A model none of whose labels names a type is refused: it could only ever answer LOW.
 */
import { BIAS_TYPES, type BiasType, TOXICITY_TYPES, type ToxicityType } from "../../detect/types.ts";

/** The bias or the toxicity half of the API, and how a mounted model's labels name its types. */
export interface ClassifierFamily<T extends string> {
  /** `bias` or `toxicity`, as in the request's `biasTypes` / `toxicityTypes`. */
  name: string;
  /** The environment variable that mounts a model for the family. */
  variable: string;
  types: readonly T[];
  /** Normalized label name -> type. */
  names: Readonly<Record<string, T>>;
}

/** A label of `id2label`, in id order, with what it means here. */
export interface ClassLabel<T extends string> {
  name: string;
  /** The type the label names, if any. */
  type?: T;
  /** The label names the absence of every category (`neutral`, `non-toxic`). */
  negative: boolean;
}

export const TOXICITY: ClassifierFamily<ToxicityType> = {
  name: "toxicity",
  variable: "SCREEN_TOXICITY_MODEL_DIR",
  types: TOXICITY_TYPES,
  names: {
    ...of("HATE", ["hate", "hateful", "hatespeech", "hatethreatening", "identityhate", "identityattack"]),
    ...of("PHYSICAL_SAFETY", [
      "physicalsafety",
      "threat",
      "threats",
      "threatening",
      "violence",
      "violent",
      "violencegraphic",
    ]),
  },
};

export const BIAS: ClassifierFamily<BiasType> = {
  name: "bias",
  variable: "SCREEN_BIAS_MODEL_DIR",
  types: BIAS_TYPES,
  names: {
    ...of("RACE_ETHNICITY", [
      "raceethnicity",
      "race",
      "racecolor",
      "racecolour",
      "racial",
      "racism",
      "racist",
      "ethnicity",
      "ethnic",
    ]),
    ...of("NATIONALITY_LOCATION", [
      "nationalitylocation",
      "nationality",
      "nationalorigin",
      "location",
      "country",
      "geographic",
      "geographical",
      "xenophobia",
      "xenophobic",
    ]),
    ...of("APPEARANCE", [
      "appearance",
      "physicalappearance",
      "looks",
      "lookism",
      "body",
      "bodyshaming",
      "bodyimage",
      "beauty",
    ]),
  },
};

function of<T extends string>(type: T, names: string[]): Record<string, T> {
  return Object.fromEntries(names.map((n) => [n, type]));
}

const NEGATIVE = new Set([
  "neutral",
  "none",
  "normal",
  "neither",
  "ok",
  "safe",
  "clean",
  "acceptable",
  "unbiased",
]);
/** `non`, `not` or `no` before a category word: a negative class. */
const NEGATED =
  /^(?:non|not|no)(?:toxic|toxicity|hate|hateful|hatespeech|offensive|abusive|harmful|bias|biased|stereotype|stereotypical|threat)$/;

/** The comparison form of a label name. */
export function normalizeLabel(name: string): string {
  return name
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\s_\-/.]/g, "");
}

export function classLabel<T extends string>(family: ClassifierFamily<T>, name: string): ClassLabel<T> {
  const key = normalizeLabel(name);
  const type = family.names[key];
  if (type) return { name, type, negative: false };
  return { name, negative: NEGATIVE.has(key) || NEGATED.test(key) };
}

/**
 * The labels of a model mounted for `family`, indexed by id. Throws, naming the labels and the
 * names it expects, when no label names one of the family's types.
 */
export function mapLabels<T extends string>(
  family: ClassifierFamily<T>,
  names: readonly string[],
  source: string,
): ClassLabel<T>[] {
  const labels = names.map((name) => classLabel(family, name));
  if (!labels.some((l) => l.type)) {
    const expected = family.types
      .map((type) => {
        const forType = Object.keys(family.names).filter((k) => family.names[k] === type);
        return `${type}: ${forType.join(", ")}`;
      })
      .join("; ");
    throw new Error(
      `${source}: none of the labels (${names.join(", ")}) names a ${family.name} type this appliance reports. ` +
        `Label names are compared in lowercase without spaces, '_', '-', '/' and '.'; expected one of ${expected}. ` +
        `If the model's classes mean these types under other names, rename them in config.json id2label.`,
    );
  }
  return labels;
}
