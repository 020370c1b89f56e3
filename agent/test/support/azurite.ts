/**
 * Azurite for tests: Microsoft's Azure Storage emulator (the Blob service: SharedKey and SAS auth,
 * block blobs, conditional headers, listing) as a child process on loopback, in memory, on a port
 * it picks, with the container `lake` in the emulator's well-known account.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { BlobServiceClient } from "@azure/storage-blob";
import type { AzureStoreOptions } from "../../src/store/index.ts";

/** The emulator's account and key: public, the same in every Azurite. */
export const AZURITE_ACCOUNT = "devstoreaccount1";
export const AZURITE_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface Azurite {
  /** The Blob service URL of the account: `http://127.0.0.1:<port>/devstoreaccount1`. */
  endpoint: string;
  /** Store options that reach it with the account key. */
  options: AzureStoreOptions;
  /** A connection string for the account. */
  connectionString: string;
  service: BlobServiceClient;
  close(): Promise<void>;
}

/** Starts Azurite's Blob service and creates `containers` (default `lake`). */
export async function startAzurite(containers: readonly string[] = ["lake"]): Promise<Azurite> {
  const main = join(
    dirname(createRequire(import.meta.url).resolve("azurite/package.json")),
    "dist/src/blob/main.js",
  );
  const child = spawn(
    process.execPath,
    [
      main,
      "--blobHost",
      "127.0.0.1",
      "--blobPort",
      "0",
      "--inMemoryPersistence",
      "--skipApiVersionCheck",
      "--disableProductStyleUrl",
      "--disableTelemetry",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const port = await listening(child);
  const endpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  const connectionString =
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
    `BlobEndpoint=${endpoint};`;
  const service = BlobServiceClient.fromConnectionString(connectionString);
  for (const name of containers) await service.getContainerClient(name).create();
  return {
    endpoint,
    options: { endpoint, accountKey: AZURITE_KEY },
    connectionString,
    service,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** The port Azurite announces on stdout, or its output when it exits first. */
function listening(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("exit", (code) =>
      reject(new Error(`azurite exited with ${code} before listening:\n${output}`)),
    );
  });
}
