/**
 * The store contract against real Google Cloud Storage and Azure, with the credentials the agent
 * itself reads (`LAKESMITH_AGENT_GCS_*`, `LAKESMITH_AGENT_AZURE_*`), under a fresh prefix of the
 * location given, removed afterwards. Skipped unless the location variable is set:
 *
 * - `LAKESMITH_LIVE_GCS_URI=gs://bucket/scratch/` with `LAKESMITH_AGENT_GCS_HMAC_ACCESS_ID` and
 *   `LAKESMITH_AGENT_GCS_HMAC_SECRET`;
 * - `LAKESMITH_LIVE_AZURE_URI=azure://account/container/scratch/` (or `abfss://...`) with one of
 *   `LAKESMITH_AGENT_AZURE_CONNECTION_STRING`, `_ACCOUNT_KEY`, `_SAS_TOKEN`.
 *
 * Both services enforce write-if-absent and list in key order, so the contract runs whole here.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { loadCliConfig } from "../src/config.ts";
import { storeOptions } from "../src/handlers/tables.ts";
import { MIN_PART_SIZE, type ObjectStore, readAll, storeFor } from "../src/store/index.ts";
import { objectStoreContract } from "./support/store-contract.ts";

const LIVE = [
  { name: "gs://", uri: process.env.LAKESMITH_LIVE_GCS_URI },
  { name: "azure://", uri: process.env.LAKESMITH_LIVE_AZURE_URI },
];

/** The store options the agent would build from this environment. */
function agentOptions() {
  const command = loadCliConfig(["--control-plane", "http://127.0.0.1:1", "--token", "live"], process.env);
  if (command.command !== "run") throw new Error("expected a run configuration");
  return storeOptions(command.config);
}

for (const { name, uri } of LIVE) {
  const base = uri?.replace(/\/*$/, "/");
  const runRoot = `${base}lakesmith-live-${Date.now()}-${randomBytes(3).toString("hex")}/`;
  let n = 0;

  describe.skipIf(!base)(`live ${name}`, () => {
    const root = () => storeFor(runRoot, agentOptions());

    afterAll(async () => {
      const store = root();
      const keys: string[] = [];
      for await (const o of store.list()) keys.push(o.key);
      const result = await store.deleteMany(keys);
      expect(result.errors).toEqual([]);
    }, 300_000);

    it("writes a large stream in parts and reads it back whole and by range", async () => {
      const options = agentOptions();
      const parts = { partSize: MIN_PART_SIZE };
      const store = storeFor(`${runRoot}large/`, {
        ...options,
        gcs: { ...options.gcs, ...parts },
        azure: { ...options.azure, ...parts },
      });
      const data = randomBytes(2 * MIN_PART_SIZE + 4321);
      await store.write(
        "big.bin",
        (async function* () {
          yield data;
        })(),
      );
      expect((await store.head("big.bin"))?.size).toBe(data.byteLength);
      expect((await readAll(await store.read("big.bin"))).equals(data)).toBe(true);
      const range = await readAll(
        await store.read("big.bin", { start: MIN_PART_SIZE - 10, end: MIN_PART_SIZE + 9 }),
      );
      expect(range.equals(data.subarray(MIN_PART_SIZE - 10, MIN_PART_SIZE + 10))).toBe(true);
    }, 300_000);
  });

  if (base)
    objectStoreContract(`live ${name}`, {
      store: async (): Promise<ObjectStore> => storeFor(`${runRoot}contract-${n++}/`, agentOptions()),
      enforcesIfAbsent: true,
      listsInKeyOrder: true,
    });
}
