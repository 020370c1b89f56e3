/**
 * The secrets key of the Node entry (`secrets/keyring.ts`), decided before the database is opened:
 *
 * - `LAKESMITH_SECRETS_KEY` set: that key, with `LAKESMITH_SECRETS_KEY_PREVIOUS` for decryption only.
 * - An embedded `file:` database and no key: the key file beside it (`lakesmith.key` next to
 *   `lakesmith.db`), never in the database itself. The first start creates it with mode 0600 and the
 *   `wx` flag, so two starts racing keep one key; later starts read it. A key file that group or other
 *   users may read stops the start (like ssh with a private key): `chmod 600` it.
 * - An in-memory database: a key that lives as long as the process, like the data.
 * - A remote database and no key: refused. A generated key would stay on this machine, and every other
 *   instance, or this one on a new machine, could not read what it encrypted.
 */
import { mkdir, open, readFile, stat } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { generateSecretsKey, parseSecretsKey, parseSecretsKeyList } from "../secrets/key-text.ts";
import { Keyring } from "../secrets/keyring.ts";

export interface NodeSecretsKeyOptions {
  dbUrl: string;
  /** `LAKESMITH_SECRETS_KEY`. */
  key?: string | undefined;
  /** `LAKESMITH_SECRETS_KEY_PREVIOUS`. */
  previous?: string | undefined;
}

/** The keyring of a Node start, from the environment or the key file (see above); throws saying what to set. */
export async function nodeKeyring(options: NodeSecretsKeyOptions): Promise<Keyring> {
  const previous = parseSecretsKeyList(options.previous, "LAKESMITH_SECRETS_KEY_PREVIOUS");
  if (options.key) return new Keyring(parseSecretsKey(options.key, "LAKESMITH_SECRETS_KEY"), previous);
  const dbPath = embeddedDbPath(options.dbUrl);
  if (dbPath === ":memory:") return Keyring.random();
  if (dbPath === undefined) {
    throw new Error(
      "LAKESMITH_SECRETS_KEY is not set. With a remote database the control plane cannot keep a generated key: " +
        "set LAKESMITH_SECRETS_KEY to 32 random bytes in base64 (`openssl rand -base64 32`), the same on every " +
        "instance, and keep a copy; without it the secrets stored in the database cannot be read.",
    );
  }
  const file = keyFileFor(dbPath);
  return new Keyring(parseSecretsKey(await readOrCreateKeyFile(file), file), previous);
}

/** `lakesmith.key` beside `lakesmith.db` (any extension replaced, or `.key` added). */
function keyFileFor(dbPath: string): string {
  return join(dirname(dbPath), `${basename(dbPath, extname(dbPath))}.key`);
}

/** The path of an embedded database, `:memory:` for an in-memory one, undefined for a remote URL. */
function embeddedDbPath(url: string): string | undefined {
  if (!url.startsWith("file:")) return undefined;
  const path = url.slice("file:".length).split("?")[0] as string;
  return path === ":memory:" || path === "" ? ":memory:" : path;
}

async function readOrCreateKeyFile(file: string): Promise<string> {
  await mkdir(dirname(file), { recursive: true });
  try {
    const handle = await open(file, "wx", 0o600);
    try {
      await handle.writeFile(`${generateSecretsKey()}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  await checkPrivate(file);
  return readWhole(file);
}

/** The file's text; waits briefly while a racing first start has created the file but not written it. */
async function readWhole(file: string): Promise<string> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const text = await readFile(file, "utf8");
    if (text.trim() !== "" || Date.now() > deadline) return text;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function checkPrivate(file: string): Promise<void> {
  if (process.platform === "win32") return;
  const mode = (await stat(file)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new Error(
      `The secrets key file ${file} can be read by other users (mode ${mode.toString(8)}); ` +
        `run \`chmod 600 ${file}\` and start again.`,
    );
  }
}
