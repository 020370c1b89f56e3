/**
 * The metastore's Thrift types and service, generated from its IDL (`gen/`, CommonJS modules that
 * the bundle and tsx load as one instance each). Test code that throws metastore exceptions for
 * the generated processor's `instanceof` checks loads them with Node's `require` instead (see
 * `test/support/hive-metastore.ts`): the test runner transpiles this import into a copy of its own.
 */

import TypesModule from "./gen/hive_metastore_types.js";
import ServiceModule from "./gen/ThriftHiveMetastore.js";

export const ttypes = TypesModule;
export const ThriftHiveMetastore = ServiceModule;
export type { ServiceModule as ThriftHiveMetastoreTypes, TypesModule as HiveIdl };
