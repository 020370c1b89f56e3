/**
 * Hive column types (the metastore's `FieldSchema.type` strings: `int`, `decimal(10,2)`,
 * `array<struct<a:int,b:string>>`, ...) as DuckDB SQL types, and in the recipe's words.
 *
 * The metastore's schema is what Hive readers apply to a table's Parquet files (by column name), so
 * a rewrite reads the files as these types. A type DuckDB has no lossless equivalent for
 * (`uniontype`, intervals) is an `UnsupportedHiveType`: the table is refused, never rewritten lossy.
 *
 * @example duckdbType("map<string,array<decimal(12,2)>>") // "MAP(VARCHAR, DECIMAL(12,2)[])"
 */

export class UnsupportedHiveType extends Error {
  override readonly name = "UnsupportedHiveType";
}

const PRIMITIVES: Record<string, { duckdb: string; recipe: string }> = {
  tinyint: { duckdb: "TINYINT", recipe: "byte" },
  smallint: { duckdb: "SMALLINT", recipe: "short" },
  int: { duckdb: "INTEGER", recipe: "integer" },
  integer: { duckdb: "INTEGER", recipe: "integer" },
  bigint: { duckdb: "BIGINT", recipe: "long" },
  float: { duckdb: "FLOAT", recipe: "float" },
  double: { duckdb: "DOUBLE", recipe: "double" },
  "double precision": { duckdb: "DOUBLE", recipe: "double" },
  boolean: { duckdb: "BOOLEAN", recipe: "boolean" },
  string: { duckdb: "VARCHAR", recipe: "string" },
  varchar: { duckdb: "VARCHAR", recipe: "string" },
  char: { duckdb: "VARCHAR", recipe: "string" },
  binary: { duckdb: "BLOB", recipe: "binary" },
  date: { duckdb: "DATE", recipe: "date" },
  timestamp: { duckdb: "TIMESTAMP", recipe: "timestamp_ntz" },
  decimal: { duckdb: "DECIMAL", recipe: "decimal" },
  numeric: { duckdb: "DECIMAL", recipe: "decimal" },
};

/** The DuckDB type of a Hive type string; throws `UnsupportedHiveType`. */
export function duckdbType(hiveType: string): string {
  const parser = new TypeParser(hiveType);
  const type = parser.type();
  parser.end();
  return type;
}

/**
 * The type in the recipe's words (`string`, `date`, `integer`, `long`, `timestamp_ntz`, `struct`,
 * ...), as onboarding's inference reads them; `string` for what it does not know.
 */
export function recipeType(hiveType: string): string {
  const name = /^\s*([a-z ]+?)\s*(?:[(<]|$)/i.exec(hiveType)?.[1]?.toLowerCase() ?? "";
  if (name === "array" || name === "map" || name === "struct") return name;
  return PRIMITIVES[name]?.recipe ?? "string";
}

/** A recursive-descent reader of one Hive type string. */
class TypeParser {
  private at = 0;

  constructor(private readonly text: string) {}

  type(): string {
    const name = this.word().toLowerCase();
    if (name === "array") {
      this.expect("<");
      const element = this.type();
      this.expect(">");
      return `${element}[]`;
    }
    if (name === "map") {
      this.expect("<");
      const key = this.type();
      this.expect(",");
      const value = this.type();
      this.expect(">");
      return `MAP(${key}, ${value})`;
    }
    if (name === "struct") {
      this.expect("<");
      const fields: string[] = [];
      if (!this.accept(">")) {
        do {
          const field = this.fieldName();
          this.expect(":");
          fields.push(`"${field.replaceAll('"', '""')}" ${this.type()}`);
        } while (this.accept(","));
        this.expect(">");
      }
      return `STRUCT(${fields.join(", ")})`;
    }
    const primitive = PRIMITIVES[name];
    if (!primitive)
      throw new UnsupportedHiveType(`Hive type '${this.text}': '${name}' has no lossless DuckDB type`);
    if (name === "decimal" || name === "numeric") {
      // Hive's decimal without precision is decimal(10,0).
      if (!this.accept("(")) return "DECIMAL(10,0)";
      const precision = this.number();
      const scale = this.accept(",") ? this.number() : 0;
      this.expect(")");
      if (precision < 1 || precision > 38 || scale > precision)
        throw new UnsupportedHiveType(
          `Hive type '${this.text}': decimal(${precision},${scale}) is out of range`,
        );
      return `DECIMAL(${precision},${scale})`;
    }
    if ((name === "varchar" || name === "char") && this.accept("(")) {
      this.number();
      this.expect(")");
    }
    return primitive.duckdb;
  }

  end(): void {
    this.space();
    if (this.at !== this.text.length) this.fail("unexpected text");
  }

  /** A type name: letters, and the two-word `double precision`. */
  private word(): string {
    this.space();
    const match = /^(double\s+precision|[a-z_]+)/i.exec(this.text.slice(this.at));
    if (!match) this.fail("a type name");
    this.at += match[0].length;
    return match[0].replace(/\s+/g, " ");
  }

  /** A struct field's name: anything up to the `:` (Hive allows backquoted names). */
  private fieldName(): string {
    this.space();
    const match = /^(`(?:[^`]|``)*`|[^:,<>]+)/.exec(this.text.slice(this.at));
    if (!match) this.fail("a field name");
    this.at += match[0].length;
    const raw = match[0].trim();
    return raw.startsWith("`") ? raw.slice(1, -1).replaceAll("``", "`") : raw;
  }

  private number(): number {
    this.space();
    const match = /^\d+/.exec(this.text.slice(this.at));
    if (!match) this.fail("a number");
    this.at += match[0].length;
    return Number(match[0]);
  }

  private accept(token: string): boolean {
    this.space();
    if (this.text.startsWith(token, this.at)) {
      this.at += token.length;
      return true;
    }
    return false;
  }

  private expect(token: string): void {
    if (!this.accept(token)) this.fail(`'${token}'`);
  }

  private space(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at] ?? "")) this.at++;
  }

  private fail(wanted: string): never {
    throw new UnsupportedHiveType(`Hive type '${this.text}': expected ${wanted} at position ${this.at}`);
  }
}
