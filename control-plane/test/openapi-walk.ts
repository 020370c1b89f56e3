/** Walks the operations of the app's own OpenAPI document, for tests that must cover every route. */
import type { TestPlane } from "./harness.ts";
import { ADMIN_KEY } from "./harness.ts";

export interface Operation {
  method: string;
  /** OpenAPI path with `{param}` placeholders. */
  path: string;
  access: { kind: string; role?: string; scope?: string } | undefined;
  hasBody: boolean;
}

export async function operationsOf(plane: TestPlane): Promise<Operation[]> {
  const doc = await (await plane.call("GET", "/openapi.json", { token: ADMIN_KEY })).json();
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(
    doc.paths as Record<string, Record<string, Record<string, unknown>>>,
  )) {
    for (const [method, op] of Object.entries(item)) {
      ops.push({
        method: method.toUpperCase(),
        path,
        access: op["x-lakesmith-access"] as Operation["access"],
        hasBody: op.requestBody !== undefined,
      });
    }
  }
  return ops;
}

/** Fills every `{param}` of a path. */
export function fillPath(path: string, value = "does-not-exist"): string {
  return path.replace(/\{[^}]+\}/g, value);
}
