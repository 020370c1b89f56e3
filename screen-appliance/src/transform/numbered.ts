/**
 * TRANSFORMATION_TYPE_NUMBERED: `[<TYPE>_<n>]`, numbered from 1 per type in order of appearance; a
 * value seen again gets its earlier number, and a person's name gets one string per word. A number
 * whose string already occurs in the original text is skipped, so reveal stays exact.
 */
import type { ClassificationType } from "../detect/types.ts";
import { nameParts, type RedactionMap, type Replacer } from "./redaction.ts";

export function numberedReplacer(original: string): Replacer {
  const byValue = new Map<string, string>();
  const counters = new Map<ClassificationType, number>();
  const maps: RedactionMap[] = [];

  const tokenFor = (type: ClassificationType, value: string): string => {
    const key = `${type}\u0000${value}`;
    const known = byValue.get(key);
    if (known) return known;
    let n = counters.get(type) ?? 0;
    let token: string;
    do {
      n += 1;
      token = `[${type}_${n}]`;
    } while (original.includes(token));
    counters.set(type, n);
    byValue.set(key, token);
    maps.push({ redactionString: token, originalData: value });
    return token;
  };

  return {
    replace(type, value) {
      if (type !== "PERSON_NAME") return tokenFor(type, value);
      return nameParts(value)
        .map((part) => (/^\s+$/u.test(part) ? part : tokenFor(type, part)))
        .join("");
    },
    maps: () => maps,
  };
}
