import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isOwnQuery, type LoggedQuery, type ReadStats } from "../src/optimus/query.ts";
import { readTrinoQueries } from "../src/optimus/trino/index.ts";
import { filtersOf, pred, readAll } from "./support/logged-queries.ts";

interface Input {
  table: string;
  columns: string[];
  bytes?: number;
}

/** A `QueryCompletedEvent` as Trino's http event listener serializes it (the fields the reader reads, and others). */
function event(id: string, sql: string, inputs: Input[], extra: { [k: string]: unknown } = {}) {
  const state = (extra.queryState as string | undefined) ?? "FINISHED";
  return JSON.stringify({
    metadata: {
      queryId: id,
      transactionId: "7f3c1a2e-1",
      query: sql,
      queryState: state,
      updateType: extra.updateType ?? null,
      preparedQuery: extra.preparedQuery ?? null,
      uri: `http://coordinator:8080/v1/query/${id}`,
      tables: [],
      routines: [],
    },
    statistics: {
      cpuTime: "1.20s",
      wallTime: "2.50s",
      physicalInputBytes: extra.physicalInputBytes ?? inputs.reduce((n, i) => n + (i.bytes ?? 0), 0),
      totalBytes: 999_999,
      totalRows: 10,
      outputBytes: 100,
      completedSplits: 4,
    },
    context: {
      user: extra.user ?? "ana",
      source: extra.source ?? null,
      catalog: "catalog" in extra ? extra.catalog : "hive",
      schema: "schema" in extra ? extra.schema : "sales",
      queryType: extra.queryType ?? "SELECT",
      serverVersion: "451",
      environment: "prod",
    },
    ioMetadata: {
      inputs: inputs.map((i) => {
        const [catalogName, schema, table] = i.table.split(".");
        return {
          catalogName,
          schema,
          table,
          columns: i.columns,
          connectorInfo: null,
          physicalInputBytes: i.bytes ?? null,
          physicalInputRows: null,
        };
      }),
      output: null,
    },
    failureInfo:
      state === "FAILED" ? { errorCode: { code: 1, name: "GENERIC_USER_ERROR" }, failureMessage: "x" } : null,
    warnings: [],
    createTime: "2024-03-05T10:00:00.000Z",
    executionStartTime: "2024-03-05T10:00:01.250Z",
    endTime: "2024-03-05T10:00:03.750Z",
  });
}

const ORDERS = {
  table: "hive.sales.orders",
  columns: ["orderkey", "custkey", "orderdate", "status", "totalprice"],
};
const CUSTOMER = { table: "hive.sales.customer", columns: ["custkey", "name", "nation", "acctbal"] };
const EVENTS = { table: "hive.web.events", columns: ["event_date", "country", "path"] };

describe("Trino reader on generated QueryCompletedEvent logs", () => {
  let root: string;
  let stats: ReadStats;
  let byId: Map<string, LoggedQuery>;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "optimus-trino-"));
    await mkdir(join(root, "trino/2024-03-05"), { recursive: true });
    const plain = [
      event(
        "20240305_q_between",
        "SELECT o.orderkey FROM orders o WHERE o.orderdate BETWEEN DATE '2024-01-01' AND DATE '2024-01-31' AND o.status IN ('F', 'O')",
        [{ ...ORDERS, bytes: 4000 }],
      ),
      event(
        "20240305_q_join",
        "SELECT name FROM hive.sales.orders AS o JOIN customer c ON o.custkey = c.custkey WHERE nation = 'DE' AND 1000 <= totalprice",
        [
          { ...ORDERS, bytes: 6000 },
          { ...CUSTOMER, bytes: 500 },
        ],
      ),
      event(
        "20240305_q_or",
        "SELECT count(*) FROM web.events WHERE country = 'DE' OR (event_date > DATE '2024-03-01' AND lower(path) = '/cart')",
        [EVENTS],
      ),
      "this is not an event",
      event(
        "20240305_q_cte",
        `WITH recent AS (SELECT custkey, orderdate FROM orders WHERE orderdate >= TIMESTAMP '2024-01-01 00:00:00')
         SELECT c.name FROM recent r JOIN customer c ON r.custkey = c.custkey
         WHERE r.orderdate < DATE '2024-02-01' AND c.acctbal > CAST('100' AS decimal(10,2)) AND NOT c.nation = 'FR'`,
        [ORDERS, CUSTOMER],
      ),
      event(
        "20240305_q_insert",
        "INSERT INTO orders_copy SELECT * FROM orders WHERE status = 'F'",
        [ORDERS],
        {
          updateType: "INSERT",
          queryType: "INSERT",
        },
      ),
      event("20240305_q_failed", "SELECT * FROM orders WHERE status = 'X'", [ORDERS], {
        queryState: "FAILED",
      }),
      JSON.stringify({ metadata: { queryState: "FINISHED" } }),
      "",
      event("20240305_q_nothing", "SELECT 1", []),
    ];
    await writeFile(join(root, "trino/2024-03-05/events.json"), `${plain.join("\n")}\n`);
    const gz = [
      event("20240305_q_own", "SELECT * FROM orders WHERE orderdate >= DATE '2024-03-01'", [ORDERS], {
        source: "lakesmith-agent",
        user: "svc",
      }),
      event(
        "20240305_q_self",
        "SELECT a.orderkey FROM orders a, orders b WHERE a.custkey = b.custkey AND a.status = 'F' AND b.status = 'O'",
        [{ ...ORDERS, bytes: 800 }],
      ),
      event("20240305_q_view", "SELECT * FROM big_orders WHERE totalprice > 10", [{ ...ORDERS, bytes: 300 }]),
      event(
        "20240305_q_no_session",
        "SELECT * FROM web.events e JOIN sales.customer c ON e.country = c.nation WHERE path = '/cart'",
        [{ ...EVENTS, bytes: 70 }, CUSTOMER],
        {
          catalog: null,
          schema: null,
        },
      ),
      event("20240305_q_unparsed", "SELECT orderkey FROM orders WHERE status IS NOT DISTINCT FROM 'F'", [
        ORDERS,
      ]),
      event(
        "20240305_q_correlated",
        "SELECT orderkey FROM orders WHERE custkey IN (SELECT custkey FROM customer WHERE acctbal > totalprice AND nation = 'DE')",
        [ORDERS, CUSTOMER],
      ),
      event(
        "20240305_q_quoted",
        `SELECT * FROM "hive"."Web"."Events" WHERE "Country" = 'DE' AND "Event_Date" >= DATE '2024-03-01'`,
        [EVENTS],
      ),
    ];
    await writeFile(join(root, "trino/2024-03-05/events-2.json.gz"), gzipSync(`${gz.join("\r\n")}\r\n`));
    await writeFile(join(root, "trino/2024-03-05/_SUCCESS"), "");
    ({ stats, byId } = await readAll(readTrinoQueries, root, "trino/"));
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("reads plain and gzipped logs, skips failed, non-SELECT and input-less queries, and counts malformed lines", () => {
    expect(stats).toEqual({ logs: 2, lines: 17, malformedLines: 2 });
    expect([...byId.keys()].sort()).toEqual([
      "20240305_q_between",
      "20240305_q_correlated",
      "20240305_q_cte",
      "20240305_q_join",
      "20240305_q_no_session",
      "20240305_q_or",
      "20240305_q_own",
      "20240305_q_quoted",
      "20240305_q_self",
      "20240305_q_unparsed",
      "20240305_q_view",
    ]);
  });

  it("turns BETWEEN into a range on both ends and keeps IN lists, on the session's catalog and schema", () => {
    const q = byId.get("20240305_q_between");
    expect(filtersOf(q)).toEqual([
      {
        table: "hive.sales.orders",
        columns: ["orderdate", "status"],
        predicates: [
          pred("orderdate", ">=", ["2024-01-01"]),
          pred("orderdate", "<=", ["2024-01-31"]),
          pred("status", "in", ["F", "O"]),
        ],
      },
    ]);
    expect(q?.engine).toBe("trino");
    expect(q?.startedAt?.toISOString()).toBe("2024-03-05T10:00:01.250Z");
    expect(q?.bytesScanned).toBe(4000);
    expect(q?.client).toBe("ana");
    expect(q?.scans[0]?.bytesScanned).toBe(4000);
  });

  it("resolves unqualified columns in a join by the inputs' columns and flips a literal on the left", () => {
    expect(filtersOf(byId.get("20240305_q_join"))).toEqual([
      {
        table: "hive.sales.orders",
        columns: ["totalprice", "custkey"],
        predicates: [pred("totalprice", ">=", ["1000"])],
      },
      {
        table: "hive.sales.customer",
        columns: ["nation", "custkey"],
        predicates: [pred("nation", "=", ["DE"])],
      },
    ]);
    expect(byId.get("20240305_q_join")?.scans.map((s) => s.bytesScanned)).toEqual([6000, 500]);
  });

  it("marks every predicate under an OR disjunctive and keeps a function's column without a predicate", () => {
    expect(filtersOf(byId.get("20240305_q_or"))).toEqual([
      {
        table: "hive.web.events",
        columns: ["country", "event_date", "path"],
        predicates: [pred("country", "=", ["DE"], true), pred("event_date", ">", ["2024-03-01"], true)],
      },
    ]);
  });

  it("follows a CTE's columns to its base table; NOT gives the column only; CAST and TIMESTAMP literals", () => {
    expect(filtersOf(byId.get("20240305_q_cte"))).toEqual([
      {
        table: "hive.sales.orders",
        columns: ["orderdate", "custkey"],
        predicates: [
          pred("orderdate", ">=", ["2024-01-01 00:00:00"]),
          pred("orderdate", "<", ["2024-02-01"]),
        ],
      },
      {
        table: "hive.sales.customer",
        columns: ["acctbal", "nation", "custkey"],
        predicates: [pred("acctbal", ">", ["100"])],
      },
    ]);
  });

  it("keeps Lakesmith's own query, recognizable by its client", () => {
    const own = byId.get("20240305_q_own");
    expect(own?.client).toBe("lakesmith-agent");
    expect(own && isOwnQuery(own)).toBe(true);
    expect(isOwnQuery(byId.get("20240305_q_join") as LoggedQuery)).toBe(false);
  });

  it("gives a self-join two scans with their own filters and half the table's bytes each", () => {
    const q = byId.get("20240305_q_self");
    expect(filtersOf(q)).toEqual([
      {
        table: "hive.sales.orders",
        columns: ["custkey", "status"],
        predicates: [pred("status", "=", ["F"])],
      },
      {
        table: "hive.sales.orders",
        columns: ["custkey", "status"],
        predicates: [pred("status", "=", ["O"])],
      },
    ]);
    expect(q?.scans.map((s) => s.bytesScanned)).toEqual([400, 400]);
  });

  it("adds an input the text doesn't name (a table under a view) as a scan without filters", () => {
    expect(filtersOf(byId.get("20240305_q_view"))).toEqual([
      {
        table: "hive.sales.big_orders",
        columns: ["totalprice"],
        predicates: [pred("totalprice", ">", ["10"])],
      },
      { table: "hive.sales.orders", columns: [], predicates: [] },
    ]);
  });

  it("reads double-quoted names as names, in Trino's lower case", () => {
    expect(filtersOf(byId.get("20240305_q_quoted"))).toEqual([
      {
        table: "hive.web.events",
        columns: ["country", "event_date"],
        predicates: [pred("country", "=", ["DE"]), pred("event_date", ">=", ["2024-03-01"])],
      },
    ]);
  });

  it("names a table (and finds its columns) by the one input its shorter name ends when the session has no catalog", () => {
    const q = byId.get("20240305_q_no_session");
    expect(filtersOf(q)).toEqual([
      { table: "hive.web.events", columns: ["path", "country"], predicates: [pred("path", "=", ["/cart"])] },
      { table: "hive.sales.customer", columns: ["nation"], predicates: [] },
    ]);
    expect(q?.scans[0]?.bytesScanned).toBe(70);
  });

  it("keeps a query whose SQL no grammar parses as its inputs, without filters", () => {
    expect(filtersOf(byId.get("20240305_q_unparsed"))).toEqual([
      { table: "hive.sales.orders", columns: [], predicates: [] },
    ]);
  });

  it("binds an unqualified column a subquery's table doesn't have to the enclosing query's table", () => {
    expect(filtersOf(byId.get("20240305_q_correlated"))).toEqual([
      { table: "hive.sales.orders", columns: ["custkey", "totalprice"], predicates: [] },
      {
        table: "hive.sales.customer",
        columns: ["acctbal", "nation"],
        predicates: [pred("nation", "=", ["DE"])],
      },
    ]);
  });
});
