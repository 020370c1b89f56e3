import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isOwnQuery, type LoggedQuery, type ReadStats } from "../src/optimus/query.ts";
import { readSqlQueries } from "../src/optimus/sql/index.ts";
import { filtersOf, pred, readAll } from "./support/logged-queries.ts";

const line = (fields: Record<string, unknown>) => JSON.stringify(fields);

describe("SQL-log reader on generated statement logs", () => {
  let root: string;
  let stats: ReadStats;
  let queries: LoggedQuery[];
  let byId: Map<string, LoggedQuery>;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "optimus-sql-"));
    await mkdir(join(root, "logs/day=2024-05-01"), { recursive: true });
    const plain = [
      line({
        query_id: "q_sales_day",
        statement:
          "SELECT s.store_id, sum(s.amount) FROM analytics.sales s WHERE s.sold_on BETWEEN '2024-04-01' AND '2024-04-30' AND s.region IN ('EU', 'US') GROUP BY 1",
        bytes_scanned: 5_000_000,
        start_time: "2024-05-01T08:00:00Z",
        user: "ana",
        application: "looker",
      }),
      line({
        id: 17,
        query_text:
          "SELECT c.name FROM analytics.sales AS s JOIN analytics.customers AS c ON s.customer_id = c.id WHERE 2023 < c.signup_year AND (s.channel = 'web' OR s.amount >= 100)",
        bytes_processed: 800,
        started_at: 1714550400000,
        client: "tableau",
      }),
      "{not json",
      line({ bytes_scanned: 10, user: "ana" }),
      line({ sql: "UPDATE analytics.sales SET amount = 0 WHERE id = 1", user: "ana" }),
      line({ sql: "SELEKT everything FROM nowhere", user: "ana" }),
      line({
        sql: "SELECT * FROM (SELECT id, amount, sold_on AS day FROM sales WHERE amount > 0) AS t WHERE t.day >= DATE '2024-04-15' AND NOT t.amount = 5",
        default_catalog: "lake",
        default_schema: "analytics",
        total_bytes_processed: "1200",
        creation_time: "2024-05-01T09:30:00.000Z",
        user: "bob",
      }),
    ];
    await writeFile(join(root, "logs/day=2024-05-01/statements.jsonl"), `${plain.join("\n")}\n`);
    const gz = [
      line({
        query_id: "q_exists",
        query:
          "SELECT o.id FROM orders o WHERE EXISTS (SELECT 1 FROM returns r WHERE r.order_id = o.id AND r.reason = 'damaged') AND o.placed_at < '2024-01-01'",
        user: "carl",
      }),
      line({
        query_id: "q_cte",
        statement:
          "WITH big AS (SELECT customer_id, amount FROM analytics.sales WHERE amount > 1000) SELECT customer_id FROM big WHERE customer_id = 42",
        application: "Lakesmith agent (compaction check)",
      }),
      line({
        query_id: "q_backquotes",
        statement: "SELECT `id` FROM `shop`.`orders` WHERE `status` = 'open'",
      }),
      line({ query_id: "q_constant", statement: "SELECT 1" }),
      line({
        query_id: "q_cte_columns",
        statement:
          "WITH daily (day, total) AS (SELECT sold_on, sum(amount) FROM sales GROUP BY sold_on) SELECT * FROM daily WHERE day >= '2024-04-01' AND total > 10",
      }),
      line({
        query_id: "q_and_or",
        statement: "SELECT * FROM events WHERE kind = 'click' AND day = DATE '2024-05-01' OR kind = 'view'",
      }),
      line({
        query_id: "q_or_and",
        statement:
          "SELECT * FROM `events` WHERE `kind` = 'view' OR `kind` = 'click' AND `day` >= '2024-05-01'",
      }),
      line({
        query_id: "q_left_join",
        statement:
          "SELECT * FROM visits v LEFT JOIN pages p ON v.page_id = p.id AND p.lang = 'de' AND v.day = 3",
      }),
    ];
    await writeFile(join(root, "logs/day=2024-05-01/more.jsonl.gz"), gzipSync(`${gz.join("\n")}`));
    ({ stats, queries, byId } = await readAll(readSqlQueries, root, "logs/"));
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("reads plain and gzipped logs; non-JSON, statement-less and unparseable records are malformed, UPDATE and SELECT 1 skipped", () => {
    expect(stats).toEqual({ logs: 2, lines: 15, malformedLines: 3 });
    // Objects in key order: more.jsonl.gz before statements.jsonl.
    expect(queries.map((q) => q.id)).toEqual([
      "q_exists",
      "q_cte",
      "q_backquotes",
      "q_cte_columns",
      "q_and_or",
      "q_or_and",
      "q_left_join",
      "q_sales_day",
      "17",
      "logs/day=2024-05-01/statements.jsonl:7",
    ]);
    expect(queries.every((q) => q.engine === "sql")).toBe(true);
  });

  it("reads each field under its aliases", () => {
    const [a, b, c] = ["q_sales_day", "17", "logs/day=2024-05-01/statements.jsonl:7"].map((id) =>
      byId.get(id),
    );
    expect([a?.bytesScanned, b?.bytesScanned, c?.bytesScanned]).toEqual([5_000_000, 800, 1200]);
    expect([a?.startedAt?.toISOString(), b?.startedAt?.toISOString(), c?.startedAt?.toISOString()]).toEqual([
      "2024-05-01T08:00:00.000Z",
      "2024-05-01T08:00:00.000Z",
      "2024-05-01T09:30:00.000Z",
    ]);
    expect([a?.client, b?.client, c?.client]).toEqual(["looker", "tableau", "bob"]);
    expect(byId.get("q_exists")?.bytesScanned).toBeUndefined();
  });

  it("turns BETWEEN into two ranges and keeps IN lists on the aliased table", () => {
    expect(filtersOf(byId.get("q_sales_day"))).toEqual([
      {
        table: "analytics.sales",
        columns: ["sold_on", "region"],
        predicates: [
          pred("sold_on", ">=", ["2024-04-01"]),
          pred("sold_on", "<=", ["2024-04-30"]),
          pred("region", "in", ["EU", "US"]),
        ],
      },
    ]);
  });

  it("flips a literal on the left, marks the OR branch disjunctive and counts join columns", () => {
    expect(filtersOf(byId.get("17"))).toEqual([
      {
        table: "analytics.sales",
        columns: ["channel", "amount", "customer_id"],
        predicates: [pred("channel", "=", ["web"], true), pred("amount", ">=", ["100"], true)],
      },
      {
        table: "analytics.customers",
        columns: ["signup_year", "id"],
        predicates: [pred("signup_year", ">", ["2023"])],
      },
    ]);
  });

  it("follows a subquery's renamed column to its base table, with the record's default catalog and schema", () => {
    expect(filtersOf(byId.get("logs/day=2024-05-01/statements.jsonl:7"))).toEqual([
      {
        table: "lake.analytics.sales",
        columns: ["amount", "sold_on"],
        predicates: [pred("amount", ">", ["0"]), pred("sold_on", ">=", ["2024-04-15"])],
      },
    ]);
  });

  it("reads an EXISTS subquery's own filters and its correlated column", () => {
    expect(filtersOf(byId.get("q_exists"))).toEqual([
      { table: "orders", columns: ["id", "placed_at"], predicates: [pred("placed_at", "<", ["2024-01-01"])] },
      { table: "returns", columns: ["order_id", "reason"], predicates: [pred("reason", "=", ["damaged"])] },
    ]);
  });

  it("pushes a filter on a CTE's column to its table and keeps Lakesmith's own query, recognizable", () => {
    const q = byId.get("q_cte");
    expect(filtersOf(q)).toEqual([
      {
        table: "analytics.sales",
        columns: ["amount", "customer_id"],
        predicates: [pred("amount", ">", ["1000"]), pred("customer_id", "=", ["42"])],
      },
    ]);
    expect(q && isOwnQuery(q)).toBe(true);
    expect(isOwnQuery(byId.get("17") as LoggedQuery)).toBe(false);
  });

  it("parses backquoted names with the MySQL grammar", () => {
    expect(filtersOf(byId.get("q_backquotes"))).toEqual([
      { table: "shop.orders", columns: ["status"], predicates: [pred("status", "=", ["open"])] },
    ]);
  });

  it("binds AND tighter than OR whichever grammar parsed the statement (every comparison here is under the OR)", () => {
    const clickOrView = [
      pred("kind", "=", ["click"], true),
      pred("day", "=", ["2024-05-01"], true),
      pred("kind", "=", ["view"], true),
    ];
    expect(filtersOf(byId.get("q_and_or"))).toEqual([
      { table: "events", columns: ["kind", "day"], predicates: clickOrView },
    ]);
    expect(filtersOf(byId.get("q_or_and"))).toEqual([
      {
        table: "events",
        columns: ["kind", "day"],
        predicates: [
          pred("kind", "=", ["view"], true),
          pred("kind", "=", ["click"], true),
          pred("day", ">=", ["2024-05-01"], true),
        ],
      },
    ]);
  });

  it("a LEFT JOIN's condition narrows the joined table only; the preserved side gets the columns", () => {
    expect(filtersOf(byId.get("q_left_join"))).toEqual([
      { table: "visits", columns: ["page_id", "day"], predicates: [] },
      { table: "pages", columns: ["id", "lang"], predicates: [pred("lang", "=", ["de"])] },
    ]);
  });

  it("names a CTE's outputs by its column list; a filter on an aggregate reaches no table", () => {
    expect(filtersOf(byId.get("q_cte_columns"))).toEqual([
      { table: "sales", columns: ["sold_on"], predicates: [pred("sold_on", ">=", ["2024-04-01"])] },
    ]);
  });
});
