/**
 * Where the given test data lives: `shared/` beside the checkout (`<repo>/../shared`), as on every
 * developer machine and in CI; `LAKESMITH_SHARED` points elsewhere. Tests copy fixtures before they
 * write; nothing writes there.
 */
import { join } from "node:path";

const SHARED = process.env.LAKESMITH_SHARED ?? join(import.meta.dirname, "../../../../shared");

/** The Delta tables other engines wrote (`shared/fixtures/delta`). */
export const DELTA_FIXTURES = join(SHARED, "fixtures/delta");
