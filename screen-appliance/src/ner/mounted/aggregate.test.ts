import { describe, expect, it } from "vitest";
import { namesFromTokens } from "./aggregate.ts";
import { parseLabel } from "./labels.ts";
import type { TokenSpan } from "./offsets.ts";

const LABELS = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC"].map(parseLabel);

/**
 * `tagged` lists each token as `text/LABEL` (`##` marks a WordPiece continuation); the tokens are
 * found in `text` in order. Each token gives its label probability `p` and spreads the rest.
 */
function names(text: string, tagged: string[], p = 0.9): string[] {
  const spans: TokenSpan[] = [];
  const subword: boolean[] = [];
  const probs = new Float32Array(tagged.length * LABELS.length);
  let from = 0;
  tagged.forEach((entry, i) => {
    const [token = "", label] = entry.split("/");
    const surface = token.replace(/^##/, "");
    const start = text.indexOf(surface, from);
    spans.push({ start, end: start + surface.length });
    subword.push(token.startsWith("##"));
    from = start + surface.length;
    const c = LABELS.findIndex((l) => l.name === label);
    for (let k = 0; k < LABELS.length; k++)
      probs[i * LABELS.length + k] = k === c ? p : (1 - p) / (LABELS.length - 1);
  });
  return namesFromTokens(text, spans, probs, LABELS, subword).map((f) => text.slice(f.start, f.end));
}

describe("aggregating token labels into PERSON_NAME spans", () => {
  it("joins B-PER with the I-PER words after it and starts a new name at each B-PER", () => {
    expect(
      names("met Ada Lovelace and Alan Turing", [
        "met/O",
        "Ada/B-PER",
        "Lovelace/I-PER",
        "and/O",
        "Alan/B-PER",
        "Turing/I-PER",
      ]),
    ).toEqual(["Ada Lovelace", "Alan Turing"]);
    expect(names("Ada Alan", ["Ada/B-PER", "Alan/B-PER"])).toEqual(["Ada", "Alan"]);
  });

  it("starts a name at an I-PER that follows O, as Hugging Face's simple strategy does", () => {
    expect(names("with Lovelace", ["with/O", "Lovelace/I-PER"])).toEqual(["Lovelace"]);
  });

  it("closes a name at E-PER and reads S-PER as a one-word name", () => {
    expect(names("Ada Lovelace Byron", ["Ada/B-PER", "Lovelace/E-PER", "Byron/I-PER"])).toEqual([
      "Ada Lovelace",
      "Byron",
    ]);
    expect(names("ask Cher now", ["ask/O", "Cher/S-PER", "now/O"])).toEqual(["Cher"]);
  });

  it("ignores other entity types and does not let a location continue a name", () => {
    expect(names("Ada Paris", ["Ada/B-PER", "Paris/I-LOC"])).toEqual(["Ada"]);
    expect(names("in Paris", ["in/O", "Paris/B-LOC"])).toEqual([]);
  });

  it("labels a word by the average over its pieces, so a name is never cut inside a word", () => {
    expect(names("José García", ["José/B-PER", "Gar/I-PER", "##cía/O"], 0.9)).toEqual(["José"]);
    // Two pieces leaning to I-PER outweigh one leaning to O.
    expect(names("José Garcíaz", ["José/B-PER", "Gar/I-PER", "##cí/I-PER", "##az/O"], 0.6)).toEqual([
      "José Garcíaz",
    ]);
  });

  it("does not carry a name across a line break, and trims punctuation at its edges", () => {
    expect(names("Ada\nLovelace", ["Ada/B-PER", "Lovelace/I-PER"])).toEqual(["Ada", "Lovelace"]);
    expect(names("(Ada Lovelace),", ["(/B-PER", "Ada/I-PER", "Lovelace/I-PER", ")/I-PER", ",/O"])).toEqual([
      "Ada Lovelace",
    ]);
  });

  it("maps the mean person probability of the words onto the likelihood scale", () => {
    const text = "Ada";
    const probs = Float32Array.from([0.25, 0.75, 0, 0, 0, 0, 0]);
    const [finding] = namesFromTokens(text, [{ start: 0, end: 3 }], probs, LABELS, [false]);
    expect(finding?.likelihood).toBe("LIKELIHOOD_TYPE_LIKELY");
  });
});
