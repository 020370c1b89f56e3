/**
 * Splits a byte stream into lines (`\n`, a trailing `\r` dropped) without holding more than the
 * line in progress: memory follows the longest line (a plan can be several MiB), not the file.
 * `byteLinesOf` yields the lines as bytes, for readers that decide from a line's first bytes whether
 * to decode it at all; `linesOf` as text. A line within one chunk is a view of it, not a copy, and
 * a source may reuse its chunk's memory for the next one (`zstd.ts` does): use a line before asking
 * for the next, or copy it.
 */
export async function* byteLinesOf(source: AsyncIterable<Uint8Array>): AsyncIterable<Buffer> {
  let pending: Buffer[] = [];
  for await (const chunk of source) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let nl = bytes.indexOf(10, start); nl !== -1; nl = bytes.indexOf(10, start)) {
      const tail = bytes.subarray(start, nl);
      yield trimmed(pending.length === 0 ? tail : Buffer.concat([...pending, tail]));
      pending = [];
      start = nl + 1;
    }
    if (start < bytes.byteLength) pending.push(Buffer.from(bytes.subarray(start)));
  }
  if (pending.length > 0) yield trimmed(Buffer.concat(pending));
}

/** The UTF-8 lines of a byte stream. */
export async function* linesOf(source: AsyncIterable<Uint8Array>): AsyncIterable<string> {
  for await (const line of byteLinesOf(source)) yield line.toString("utf8");
}

function trimmed(line: Buffer): Buffer {
  return line.byteLength > 0 && line[line.byteLength - 1] === 13 ? line.subarray(0, -1) : line;
}
