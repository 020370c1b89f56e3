export * from "./ids.ts";
export * from "./problem.ts";
export * from "./time.ts";
