export * from "./ids.ts";
export * from "./time.ts";
