import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.ts";
import { BUILT_IN_LICENSE_PUBLIC_KEY } from "./license/public-key.ts";

describe("configuration", () => {
  it("defaults to port 8080, the mounted license path, the built-in key, a 1 MB body limit and CUDA-then-CPU", () => {
    expect(parseConfig({})).toEqual({
      PORT: 8080,
      HOST: "0.0.0.0",
      SCREEN_LICENSE_PATH: "/etc/screen/screen.lic",
      SCREEN_LICENSE_PUBLIC_KEY: BUILT_IN_LICENSE_PUBLIC_KEY,
      SCREEN_MAX_BODY_BYTES: 1048576,
      SCREEN_EXECUTION_PROVIDER: "auto",
      SCREEN_WORKERS: "auto",
    });
  });

  it("reads SCREEN_WORKERS as a process count or auto, and names it when it is neither", () => {
    expect(parseConfig({ SCREEN_WORKERS: "2" }).SCREEN_WORKERS).toBe(2);
    expect(parseConfig({ SCREEN_WORKERS: "auto" }).SCREEN_WORKERS).toBe("auto");
    expect(() => parseConfig({ SCREEN_WORKERS: "many" })).toThrow(
      'SCREEN_WORKERS: expected "auto" or a whole number of processes from 1 to 256',
    );
    expect(() => parseConfig({ SCREEN_WORKERS: "0" })).toThrow("SCREEN_WORKERS: expected");
  });

  it("reads overrides from the environment", () => {
    const config = parseConfig({
      PORT: "9000",
      SCREEN_MAX_BODY_BYTES: "2048",
      SCREEN_EXECUTION_PROVIDER: "cpu",
      SCREEN_NER_MODEL_DIR: "/models/ner",
    });
    expect(config).toMatchObject({
      PORT: 9000,
      SCREEN_MAX_BODY_BYTES: 2048,
      SCREEN_EXECUTION_PROVIDER: "cpu",
      SCREEN_NER_MODEL_DIR: "/models/ner",
    });
  });

  it("reads an empty SCREEN_NER_MODEL_DIR as unset, so the built-in name model is used", () => {
    expect(parseConfig({ SCREEN_NER_MODEL_DIR: "" }).SCREEN_NER_MODEL_DIR).toBeUndefined();
  });

  it("reads the mounted toxicity and bias model directories, an empty value as unset", () => {
    expect(
      parseConfig({ SCREEN_TOXICITY_MODEL_DIR: "/models/toxicity", SCREEN_BIAS_MODEL_DIR: "/models/bias" }),
    ).toMatchObject({ SCREEN_TOXICITY_MODEL_DIR: "/models/toxicity", SCREEN_BIAS_MODEL_DIR: "/models/bias" });
    const empty = parseConfig({ SCREEN_TOXICITY_MODEL_DIR: "", SCREEN_BIAS_MODEL_DIR: "" });
    expect(empty.SCREEN_TOXICITY_MODEL_DIR).toBeUndefined();
    expect(empty.SCREEN_BIAS_MODEL_DIR).toBeUndefined();
  });

  it("refuses a start with an invalid value, naming the variable", () => {
    expect(() => parseConfig({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => parseConfig({ SCREEN_EXECUTION_PROVIDER: "tpu" })).toThrow(/SCREEN_EXECUTION_PROVIDER/);
  });
});
