/**
 * The metastore's Thrift types and service, generated from its IDL (`gen/`, CommonJS), loaded
 * once through Node's `require`: the generated service requires its types by that path, and the
 * processor tells a metastore exception from a fault by `instanceof`, so every user of the types
 * (client, test metastore) must share that one instance rather than a transpiled copy.
 */
import { createRequire } from "node:module";
import type TypesModule from "./gen/hive_metastore_types.js";
import type ServiceModule from "./gen/ThriftHiveMetastore.js";

const require = createRequire(import.meta.url);

export const ttypes: typeof TypesModule = require("./gen/hive_metastore_types.js");
export const ThriftHiveMetastore: typeof ServiceModule = require("./gen/ThriftHiveMetastore.js");
export type { ServiceModule as ThriftHiveMetastoreTypes, TypesModule as HiveIdl };
