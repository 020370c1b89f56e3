/**
 * `npm run db:migrate -w control-plane`: applies the committed migrations to LAKESMITH_DB_URL (with
 * LAKESMITH_DB_AUTH_TOKEN), for databases the Node entry does not migrate itself, such as the remote
 * libSQL server of a Workers deployment.
 */
import { openNodeDatabase } from "../src/adapter/node-db.ts";
import { parseNodeEnv } from "../src/env.ts";

const env = parseNodeEnv(process.env);
const { client } = await openNodeDatabase(env.LAKESMITH_DB_URL, env.LAKESMITH_DB_AUTH_TOKEN);
client.close();
console.log("migrations applied");
