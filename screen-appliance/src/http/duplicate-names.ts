/**
 * `JSON.parse` keeps the last of two members with the same name and drops the first without a word,
 * so `{"transformationType": "A", "transformationType": "B"}` would silently mean B. This scan finds
 * such a repeat so the request can be refused instead.
 *
 * - Input: text that `JSON.parse` has already accepted, so the scan trusts its structure and only
 *   tracks strings, brackets and commas; one pass, O(length), no recursion (nesting depth is free).
 * - Output: the path of the first repeated name in the request's own notation
 *   (`redactionMaps.1.originalData`), or undefined.
 * - Names are compared after JSON unescaping, so `"data"` and `"d\u0061ta"` are the same name.
 */

type Frame = { kind: "object"; names: Set<string>; named: boolean } | { kind: "array" };

/**
 * The path of the first object member whose name repeats an earlier one in the same object.
 *
 * @example
 * firstDuplicateName('{"a": {"b": 1, "b": 2}}'); // "a.b"
 */
export function firstDuplicateName(json: string): string | undefined {
  const frames: Frame[] = [];
  const path: (string | number)[] = [];
  let expectingName = false;
  for (let i = 0; i < json.length; i++) {
    const ch = json[i];
    const top = frames.at(-1);
    if (ch === '"') {
      const end = endOfString(json, i);
      if (expectingName && top?.kind === "object") {
        const name = JSON.parse(json.slice(i, end)) as string;
        if (top.names.has(name)) return [...path, name].join(".");
        top.names.add(name);
        top.named = true;
        path.push(name);
        expectingName = false;
      }
      i = end - 1;
    } else if (ch === "{") {
      frames.push({ kind: "object", names: new Set(), named: false });
      expectingName = true;
    } else if (ch === "[") {
      frames.push({ kind: "array" });
      path.push(0);
    } else if (ch === ",") {
      if (top?.kind === "object") {
        path.pop();
        expectingName = true;
      } else if (top?.kind === "array") {
        path.push((path.pop() as number) + 1);
      }
    } else if (ch === "}" || ch === "]") {
      if (top?.kind === "array" || top?.named) path.pop();
      frames.pop();
      expectingName = false;
    }
  }
  return undefined;
}

/** Index just past the closing quote of the string literal that opens at `start`. */
function endOfString(json: string, start: number): number {
  for (let i = start + 1; i < json.length; i++) {
    if (json[i] === "\\") i++;
    else if (json[i] === '"') return i + 1;
  }
  return json.length;
}
