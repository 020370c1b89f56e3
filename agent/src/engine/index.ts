/**
 * The agent's DuckDB engine: the only module that talks to DuckDB (architecture.md, "Dependency
 * rules"). Crunch rewrites and validates with it; onboarding inspection profiles with it.
 */
export * from "./checksum.ts";
export * from "./duckdb.ts";
export * from "./layout.ts";
export * from "./profile.ts";
export * from "./rewrite.ts";
export * from "./row-bytes.ts";
export * from "./stats.ts";
export * from "./tune.ts";
