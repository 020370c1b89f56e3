/**
 * DuckDB type spellings (as `describe` and `typeof` print them) parsed into a tree and printed
 * back: a conversion changes one leaf of a nested type (`STRUCT(a DOUBLE)[]`) without string
 * surgery, and Delta statistics find the leaves of a struct (`stats.ts`).
 *
 * Covers scalars (`BIGINT`, `DECIMAL(38,0)`, `TIMESTAMP WITH TIME ZONE`, `JSON`, ...), lists
 * (`T[]`), structs (`STRUCT(name T, "quoted name" T)`) and maps (`MAP(K, V)`); anything else
 * (`UNION(...)`, fixed-size arrays) is an error. Struct field names are printed quoted, so any name
 * survives the round trip.
 */

export type TypeNode =
  | { kind: "scalar"; name: string }
  | { kind: "list"; of: TypeNode }
  | { kind: "struct"; fields: [string, TypeNode][] }
  | { kind: "map"; key: TypeNode; value: TypeNode };

export function parseType(text: string): TypeNode {
  const parser = { text, at: 0 };
  const node = parseNode(parser);
  if (parser.at !== text.length) throw new Error(`unexpected "${text.slice(parser.at)}" in type ${text}`);
  return node;
}

export function formatType(node: TypeNode): string {
  switch (node.kind) {
    case "scalar":
      return node.name;
    case "list":
      return `${formatType(node.of)}[]`;
    case "struct":
      return `STRUCT(${node.fields.map(([n, f]) => `"${n.replaceAll('"', '""')}" ${formatType(f)}`).join(", ")})`;
    case "map":
      return `MAP(${formatType(node.key)}, ${formatType(node.value)})`;
  }
}

/** The type with each scalar replaced by `replace(scalar)` (the same tree where nothing changes). */
export function mapScalars(node: TypeNode, replace: (name: string) => string): TypeNode {
  switch (node.kind) {
    case "scalar": {
      const name = replace(node.name);
      return name === node.name ? node : { kind: "scalar", name };
    }
    case "list":
      return { kind: "list", of: mapScalars(node.of, replace) };
    case "struct":
      return { kind: "struct", fields: node.fields.map(([n, f]) => [n, mapScalars(f, replace)]) };
    case "map":
      return { kind: "map", key: mapScalars(node.key, replace), value: mapScalars(node.value, replace) };
  }
}

interface Parser {
  text: string;
  at: number;
}

function parseNode(p: Parser): TypeNode {
  let node: TypeNode;
  if (p.text.startsWith("STRUCT(", p.at)) {
    p.at += "STRUCT(".length;
    const fields: [string, TypeNode][] = [];
    while (p.text[p.at] !== ")") {
      const name = parseName(p);
      expect(p, " ");
      fields.push([name, parseNode(p)]);
      if (p.text[p.at] === ",") expect(p, ", ");
    }
    p.at++;
    node = { kind: "struct", fields };
  } else if (p.text.startsWith("MAP(", p.at)) {
    p.at += "MAP(".length;
    const key = parseNode(p);
    expect(p, ", ");
    const value = parseNode(p);
    expect(p, ")");
    node = { kind: "map", key, value };
  } else {
    // A scalar, with its parameters: DECIMAL(38,0), VARCHAR, TIMESTAMP WITH TIME ZONE.
    const match = /^[A-Z_][A-Z0-9_ ]*(\(\d+(,\s*\d+)?\))?/i.exec(p.text.slice(p.at));
    if (!match) throw new Error(`no type at "${p.text.slice(p.at)}" in ${p.text}`);
    p.at += match[0].length;
    node = { kind: "scalar", name: match[0] };
  }
  while (p.text.startsWith("[]", p.at)) {
    p.at += 2;
    node = { kind: "list", of: node };
  }
  return node;
}

function parseName(p: Parser): string {
  if (p.text[p.at] !== '"') {
    const end = p.text.indexOf(" ", p.at);
    const name = p.text.slice(p.at, end);
    p.at = end;
    return name;
  }
  let name = "";
  p.at++;
  for (;;) {
    const quote = p.text.indexOf('"', p.at);
    if (quote < 0) throw new Error(`unterminated name in type ${p.text}`);
    name += p.text.slice(p.at, quote);
    p.at = quote + 1;
    if (p.text[p.at] !== '"') return name;
    name += '"';
    p.at++;
  }
}

function expect(p: Parser, token: string): void {
  if (!p.text.startsWith(token, p.at))
    throw new Error(`expected "${token}" at "${p.text.slice(p.at)}" in ${p.text}`);
  p.at += token.length;
}
