/**
 * The shared part of every transformation: replace each finding's span by a redaction string and
 * collect the map `/reveal` needs to put the originals back.
 */
import type { ClassificationType, Finding } from "../detect/types.ts";

export interface RedactionMap {
  redactionString: string;
  originalData: string;
}

/** Produces the replacement for one detected value and remembers how to undo it. */
export interface Replacer {
  replace(type: ClassificationType, value: string): string;
  maps(): RedactionMap[];
}

export interface Redaction {
  redactedData: string;
  replacements: { finding: Finding; replacement: string }[];
  redactionMaps: RedactionMap[];
}

/** `findings` must not overlap (see `resolveOverlaps`). */
export function redact(text: string, findings: readonly Finding[], replacer: Replacer): Redaction {
  let out = "";
  let cursor = 0;
  const replacements: Redaction["replacements"] = [];
  for (const finding of [...findings].sort((a, b) => a.start - b.start)) {
    const replacement = replacer.replace(finding.type, text.slice(finding.start, finding.end));
    out += text.slice(cursor, finding.start) + replacement;
    cursor = finding.end;
    replacements.push({ finding, replacement });
  }
  out += text.slice(cursor);
  return { redactedData: out, replacements, redactionMaps: replacer.maps() };
}

/**
 * Splits a person's name into words and the whitespace between them, so each word gets its own
 * redaction string: "Ana  María" -> ["Ana", "  ", "María"].
 */
export function nameParts(value: string): string[] {
  return value.split(/(\s+)/u).filter((part) => part.length > 0);
}

/** Replaces every redaction string of the map in one left-to-right pass, longest strings first. */
export function revealWithMaps(redactedData: string, maps: readonly RedactionMap[]): string {
  if (maps.length === 0) return redactedData;
  const lookup = new Map(maps.map((m) => [m.redactionString, m.originalData]));
  const alternatives = [...lookup.keys()]
    .filter((k) => k.length > 0)
    .sort((a, b) => b.length - a.length)
    .map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (alternatives.length === 0) return redactedData;
  return redactedData.replace(new RegExp(alternatives.join("|"), "gu"), (s) => lookup.get(s) ?? s);
}
