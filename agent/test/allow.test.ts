import { uriScheme } from "@lakesmith/shared/jobs";
import { locationKey } from "@lakesmith/shared/locations";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AllowList, locationsIn, parseLocation } from "../src/allow.ts";
import { defineHandler } from "../src/registry.ts";
import { admit } from "../src/runner.ts";

describe("allow list", () => {
  const allow = new AllowList(["file:///data", "s3://Lake/raw/"]);
  const ok = (uri: string) => allow.check(uri).ok;

  it("allows a prefix itself and what lies below it", () => {
    expect(ok("file:///data")).toBe(true);
    expect(ok("file:///data/")).toBe(true);
    expect(ok("file:///data/t1/part-0.parquet")).toBe(true);
    expect(ok("/data/t1")).toBe(true);
    expect(ok("file://localhost/data/t1")).toBe(true);
    expect(ok("s3://lake/raw")).toBe(true);
    expect(ok("s3://lake/raw/2026/01/x.json")).toBe(true);
    expect(ok("S3://LAKE/raw/x")).toBe(true);
  });

  it("never matches a sibling that merely shares the prefix's characters", () => {
    expect(ok("file:///data2")).toBe(false);
    expect(ok("file:///data2/t1")).toBe(false);
    expect(ok("file:///dat")).toBe(false);
    expect(ok("s3://lake/rawer/x")).toBe(false);
    expect(ok("s3://lake-2/raw/x")).toBe(false);
  });

  it("normalises dot segments and escapes before comparing", () => {
    expect(ok("file:///data/t1/../../etc/passwd")).toBe(false);
    expect(ok("file:///data/../data2")).toBe(false);
    expect(ok("file:///other/../data/t1")).toBe(true);
    expect(ok("file:///data/./t1")).toBe(true);
    expect(ok("file:///data/%2e%2e/etc")).toBe(false);
    expect(ok("file:///data%2Ft1")).toBe(false);
    expect(parseLocation("file:///a/b/../c").segments).toEqual(["a", "c"]);
  });

  it("refuses what it can't read with certainty, saying why", () => {
    expect(allow.check("s3://lake/raw/../private/x")).toEqual({
      ok: false,
      reason: expect.stringContaining("'..' segment"),
    });
    expect(allow.check("file://evil-host/data/x")).toEqual({
      ok: false,
      reason: expect.stringContaining("must be local"),
    });
    expect(allow.check("hdfs://namenode/raw")).toEqual({
      ok: false,
      reason: expect.stringContaining("scheme 'hdfs'"),
    });
    expect(allow.check("data/t1")).toEqual({ ok: false, reason: expect.stringContaining("is not a URI") });
    expect(allow.check("file:///data/t1?x=1").ok).toBe(false);
    expect(allow.check("file:///data\\..\\x").ok).toBe(false);
  });

  it("explains a refusal with the allowed prefixes and the flag to change", () => {
    const verdict = allow.check("file:///elsewhere/t");
    expect(verdict).toEqual({
      ok: false,
      reason:
        "location 'file:///elsewhere/t' is outside this agent's allow list (file:///data, s3://lake/raw); " +
        "add a prefix with --allow or LAKESMITH_AGENT_ALLOW (comma-separated; the local agent of 'npm start' takes it too) to permit it",
    });
  });

  it("allows nothing when empty, and announces the schemes it allows", () => {
    expect(new AllowList([]).check("file:///data").ok).toBe(false);
    expect(allow.schemes()).toEqual(["file", "s3"]);
    expect(new AllowList(["file:///x"]).schemes()).toEqual(["file"]);
  });

  it("reads gs:// and gcs:// as one store, with Google's bucket rules", () => {
    const gcs = new AllowList(["gcs://Lake_1/raw"]);
    expect(gcs.check("gs://lake_1/raw/x.json").ok).toBe(true);
    expect(gcs.check("gcs://lake_1/raw/x.json").ok).toBe(true);
    expect(gcs.check("gs://lake_1/rawer").ok).toBe(false);
    expect(gcs.check("s3://lake_1/raw/x").ok).toBe(false);
    expect(gcs.announced().allow).toEqual(["gs://lake_1/raw"]);
    expect(parseLocation(`gs://${"a".repeat(60)}.${"b".repeat(60)}/k`).root).toHaveLength(121);
    expect(() => parseLocation(`gs://${"a".repeat(64)}/k`)).toThrow("invalid bucket name");
    expect(() => parseLocation("gs://-lake/k")).toThrow("invalid bucket name");
  });

  it("reads azure:// and Hadoop's abfs[s]:// as one store, rooted at account/container", () => {
    const azure = new AllowList(["abfss://Raw@Acct1.dfs.core.windows.net/landing/"]);
    expect(parseLocation("abfss://raw@acct1.dfs.core.windows.net/landing/x")).toEqual({
      scheme: "azure",
      root: "acct1/raw",
      segments: ["landing", "x"],
    });
    expect(azure.announced().allow).toEqual(["azure://acct1/raw/landing"]);
    expect(azure.check("azure://acct1/raw/landing/2026/x.json").ok).toBe(true);
    expect(azure.check("AZURE://ACCT1/RAW/landing").ok).toBe(true);
    expect(azure.check("abfs://raw@acct1.dfs.core.windows.net/landing/x").ok).toBe(true);
    expect(azure.check("azure://acct1/raw/Landing/x").ok).toBe(false);
    expect(azure.check("azure://acct1/raw2/landing/x").ok).toBe(false);
    expect(azure.check("azure://acct2/raw/landing/x").ok).toBe(false);
    expect(azure.check("azure://acct1/raw/landing/../secret").ok).toBe(false);
  });

  it("refuses Azure spellings that can't be placed with certainty, naming the one to use", () => {
    const reason = (uri: string) => {
      const verdict = new AllowList(["azure://acct1/raw"]).check(uri);
      return verdict.ok ? "allowed" : verdict.reason;
    };
    expect(reason("az://raw/landing")).toContain(
      "name Azure locations as azure://<account>/<container>/<path>",
    );
    expect(reason("wasbs://raw@acct1.blob.core.windows.net/x")).toContain("wasbs://, which is not read");
    expect(reason("abfss://raw@acct1.dfs.core.chinacloudapi.cn/x")).toContain(
      "must name '<container>@<account>.dfs.core.windows.net'",
    );
    expect(reason("abfss://acct1.dfs.core.windows.net/x")).toContain("dfs.core.windows.net");
    expect(reason("azure://acct1")).toContain("invalid container name ''");
    expect(reason("azure://acct1/r--aw/x")).toContain("invalid container name 'r--aw'");
    expect(reason("azure://acct_1/raw/x")).toContain("invalid storage account name 'acct_1'");
  });

  it("asks one capability of every spelling of a store, as its agents announce", () => {
    const allow = new AllowList([
      "file:///x",
      "s3://lake/a",
      "gcs://lake/b",
      "abfss://raw@acct1.dfs.core.windows.net/",
    ]);
    expect(allow.schemes()).toEqual(["file", "s3", "gs", "azure"]);
    expect(uriScheme("abfss://raw@acct1.dfs.core.windows.net/t")).toBe("azure");
    expect(uriScheme("abfs://raw@acct1.dfs.core.windows.net/t")).toBe("azure");
    expect(uriScheme("gcs://lake/t")).toBe("gs");
    expect(uriScheme("/data/t")).toBe("file");
    expect(uriScheme("hdfs://namenode/t")).toBe("hdfs");
    expect(locationKey("abfss://raw@acct1.dfs.core.windows.net/t")).toBe("azure://acct1/raw/t/");
    expect(locationKey("azure://acct1/raw/t/")).toBe("azure://acct1/raw/t/");
  });

  it("finds locations in a payload by key and by shape, at any depth", () => {
    expect(
      locationsIn({
        uri: "s3://b/t",
        ms: 5,
        nested: { source_uri: "relative/x", note: "file:///x/y", list: ["gs://g/z", "plain"] },
        locations: ["/abs/a", "/abs/b"],
        name: "table",
      }).sort(),
    ).toEqual(["/abs/a", "/abs/b", "file:///x/y", "gs://g/z", "relative/x", "s3://b/t"]);
    expect(locationsIn({ ms: 10 })).toEqual([]);
  });

  it("leaves a catalog's or metastore's address to the endpoints a handler declares", () => {
    expect(
      locationsIn({
        connection: { metastore_uri: "thrift://metastore:9083", catalog_uri: "https://polaris.example.com" },
        table_uri: "s3://b/t",
      }),
    ).toEqual(["s3://b/t"]);
  });
});

describe("admitting a job", () => {
  const handler = defineHandler({
    kind: "compare",
    payload: z.object({ logs: z.string(), tables: z.array(z.string()), output: z.string().optional() }),
    locations: (p) => [p.logs],
    references: (p) => p.tables,
    run: async () => undefined,
  });
  const allow = new AllowList(["s3://logs/"]);

  it("leaves out the URIs a handler only compares against, and checks every other URI of the payload", () => {
    const payload = { logs: "s3://logs/spark/", tables: ["s3://lake/a", "s3a://lake/b"] };
    expect(admit(handler, payload, payload, allow)).toEqual({ ok: true });
    const writing = { ...payload, output: "s3://lake/out" };
    expect(admit(handler, writing, writing, allow).ok).toBe(false);
    const reading = { ...payload, logs: "s3://lake/a" };
    expect(admit(handler, reading, reading, allow).ok).toBe(false);
  });
});
