/**
 * A conversion's inputs as DuckDB reads them (local copies) and the errors DuckDB raises on them,
 * rewritten to name each input's URI instead of its local copy.
 *
 * DuckDB names the line of a value that does not fit its column exactly, but the line after a
 * record that is not JSON at all (1.5.6: "line 3" for line 2, "record/value 2" for line 1): for a
 * newline-delimited input, the line of malformed JSON is found by parsing the input's lines.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import { JobError } from "../registry.ts";

/** A local input and the URI it was read from (error messages name the URI). */
export interface LocalInput {
  path: string;
  uri: string;
  size: number;
}

/** DuckDB's error for a record it cannot read with the schema, naming the input's URI, not its copy. */
export async function misfit(err: unknown, inputs: readonly LocalInput[]): Promise<Error> {
  const raw = err instanceof Error ? err.message : String(err);
  let message = raw.split("\n")[0] ?? raw;
  const malformed = /Malformed JSON in file "([^"]+)"/.exec(message)?.[1];
  const line = malformed ? await firstMalformedLine(malformed).catch(() => undefined) : undefined;
  for (const input of inputs) message = message.replaceAll(input.path, input.uri);
  if (line !== undefined) {
    const uri = inputs.find((i) => i.path === malformed)?.uri ?? malformed;
    message = `malformed JSON in ${uri} at line ${line} (DuckDB: ${message})`;
  }
  return new JobError(`a value does not fit the inputs' schema, nothing was converted: ${message}`, {
    retryable: false,
    cause: err,
  });
}

/** The first non-empty line of a newline-delimited (maybe gzip) file that is not JSON; none for an array file. */
async function firstMalformedLine(path: string): Promise<number | undefined> {
  const file = createReadStream(path);
  const lines = createInterface({
    input: path.endsWith(".gz") ? file.pipe(createGunzip()) : file,
    crlfDelay: Infinity,
  });
  let n = 0;
  try {
    for await (const line of lines) {
      n++;
      const text = line.trim();
      if (text === "") continue;
      // An array file spans lines: its lines are not records.
      if (n === 1 && text.startsWith("[")) return undefined;
      try {
        JSON.parse(text);
      } catch {
        return n;
      }
    }
  } finally {
    lines.close();
    file.destroy();
  }
  return undefined;
}
