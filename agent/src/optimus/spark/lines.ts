/**
 * Splits a byte stream into UTF-8 lines (`\n`, a trailing `\r` dropped) without holding more than the
 * line in progress: memory follows the longest line (a plan can be several MiB), not the file.
 */
export async function* linesOf(source: AsyncIterable<Uint8Array>): AsyncIterable<string> {
  let pending: Buffer[] = [];
  for await (const chunk of source) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let nl = bytes.indexOf(10, start); nl !== -1; nl = bytes.indexOf(10, start)) {
      pending.push(bytes.subarray(start, nl));
      yield text(pending);
      pending = [];
      start = nl + 1;
    }
    if (start < bytes.byteLength) pending.push(Buffer.from(bytes.subarray(start)));
  }
  if (pending.length > 0) yield text(pending);
}

function text(parts: Buffer[]): string {
  const line = Buffer.concat(parts).toString("utf8");
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
