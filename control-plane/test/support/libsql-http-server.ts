/**
 * A test-only libSQL server: the Hrana v2 protocol over HTTP (`POST /v2/pipeline`, JSON), backed
 * by an embedded libSQL file, with bearer-token auth. It stands in for sqld, which cannot be
 * installed here, so tests can run the control plane against a *remote* libSQL URL exactly as a
 * Turso or sqld deployment would be used.
 *
 * Scope: what @libsql/client sends (execute, batch with conditions, sequence, store_sql/close_sql,
 * get_autocommit, close). One SQLite connection serves every stream, so requests are handled one
 * at a time; that is all a test needs.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Database from "libsql";

type HranaValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

interface Stmt {
  sql?: string;
  sql_id?: number;
  args?: HranaValue[];
  named_args?: { name: string; value: HranaValue }[];
  want_rows?: boolean;
}

type Condition =
  | { type: "ok"; step: number }
  | { type: "error"; step: number }
  | { type: "not"; cond: Condition }
  | { type: "and"; conds: Condition[] }
  | { type: "or"; conds: Condition[] }
  | { type: "is_autocommit" };

interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function startLibsqlHttpServer(dbPath: string, authToken: string): Promise<RunningServer> {
  const db = new Database(dbPath);
  const storedSql = new Map<string, Map<number, string>>();

  function toJs(value: HranaValue): unknown {
    switch (value.type) {
      case "null":
        return null;
      case "integer":
        return BigInt(value.value);
      case "float":
        return value.value;
      case "text":
        return value.value;
      case "blob":
        return Buffer.from(value.base64, "base64");
    }
  }

  function toHrana(value: unknown): HranaValue {
    if (value === null || value === undefined) return { type: "null" };
    if (typeof value === "bigint") return { type: "integer", value: value.toString() };
    if (typeof value === "number") return { type: "float", value };
    if (typeof value === "string") return { type: "text", value };
    if (Buffer.isBuffer(value)) return { type: "blob", base64: value.toString("base64") };
    throw new Error(`cannot encode ${typeof value}`);
  }

  function execute(stmt: Stmt, baton: string) {
    const sql = stmt.sql ?? storedSql.get(baton)?.get(stmt.sql_id ?? -1);
    if (sql === undefined) throw new Error("statement has neither sql nor a known sql_id");
    const prepared = db.prepare(sql);
    prepared.safeIntegers(true);
    const args: unknown = stmt.named_args?.length
      ? Object.fromEntries(stmt.named_args.map((a) => [a.name.replace(/^[:@$]/, ""), toJs(a.value)]))
      : (stmt.args ?? []).map(toJs);
    if (prepared.reader) {
      const rows = (prepared.raw(true).all(args) as unknown[][]).map((row) => row.map(toHrana));
      const cols = prepared
        .columns()
        .map((c: { name: string; type: string | null }) => ({ name: c.name, decltype: c.type }));
      return {
        cols,
        rows: stmt.want_rows === false ? [] : rows,
        affected_row_count: 0,
        last_insert_rowid: null,
      };
    }
    const info = prepared.run(args);
    return {
      cols: [],
      rows: [],
      affected_row_count: Number(info.changes),
      last_insert_rowid: info.lastInsertRowid == null ? null : String(info.lastInsertRowid),
    };
  }

  function holds(cond: Condition | undefined, outcomes: ("ok" | "error" | undefined)[]): boolean {
    if (!cond) return true;
    switch (cond.type) {
      case "ok":
        return outcomes[cond.step] === "ok";
      case "error":
        return outcomes[cond.step] === "error";
      case "not":
        return !holds(cond.cond, outcomes);
      case "and":
        return cond.conds.every((c) => holds(c, outcomes));
      case "or":
        return cond.conds.some((c) => holds(c, outcomes));
      case "is_autocommit":
        return !db.inTransaction;
    }
  }

  const error = (err: unknown) => ({
    message: (err as Error).message,
    code: (err as { code?: string }).code ?? "UNKNOWN",
  });

  function handle(request: Record<string, unknown>, baton: string) {
    switch (request.type) {
      case "execute":
        return { type: "execute", result: execute(request.stmt as Stmt, baton) };
      case "batch": {
        const steps = (request.batch as { steps: { condition?: Condition; stmt: Stmt }[] }).steps;
        const outcomes: ("ok" | "error" | undefined)[] = [];
        const step_results: unknown[] = [];
        const step_errors: unknown[] = [];
        for (const step of steps) {
          if (!holds(step.condition, outcomes)) {
            outcomes.push(undefined);
            step_results.push(null);
            step_errors.push(null);
            continue;
          }
          try {
            step_results.push(execute(step.stmt, baton));
            step_errors.push(null);
            outcomes.push("ok");
          } catch (err) {
            step_results.push(null);
            step_errors.push(error(err));
            outcomes.push("error");
          }
        }
        return { type: "batch", result: { step_results, step_errors } };
      }
      case "sequence":
        db.exec(request.sql as string);
        return { type: "sequence" };
      case "store_sql": {
        const stored = storedSql.get(baton) ?? new Map<number, string>();
        stored.set(request.sql_id as number, request.sql as string);
        storedSql.set(baton, stored);
        return { type: "store_sql" };
      }
      case "close_sql":
        storedSql.get(baton)?.delete(request.sql_id as number);
        return { type: "close_sql" };
      case "get_autocommit":
        return { type: "get_autocommit", is_autocommit: !db.inTransaction };
      case "close":
        storedSql.delete(baton);
        return { type: "close" };
      default:
        throw new Error(`unsupported request type ${String(request.type)}`);
    }
  }

  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${authToken}`) return send(401, { error: "Unauthorized" });
    if (req.method === "GET" && req.url === "/v2") return send(200, {});
    if (req.method !== "POST" || req.url !== "/v2/pipeline") return send(404, { error: "Not found" });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      baton: string | null;
      requests: Record<string, unknown>[];
    };
    const baton = body.baton ?? randomUUID();
    let closed = false;
    const results = body.requests.map((request) => {
      if (request.type === "close") closed = true;
      try {
        return { type: "ok", response: handle(request, baton) };
      } catch (err) {
        return { type: "error", error: error(err) };
      }
    });
    send(200, { baton: closed ? null : baton, base_url: null, results });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          db.close();
          resolve();
        });
      }),
  };
}
