#!/bin/sh
# Regenerates the Hive Metastore's Thrift code in src/catalogs/hive/gen/ from the IDL kept there
# (gen/README.md says where it came from). Needs the Thrift compiler 0.17, whose output matches
# the `thrift` runtime pinned in package.json (Debian: apt-get install thrift-compiler). The output
# is committed: builds and CI need no compiler.
set -eu
cd "$(dirname "$0")/../src/catalogs/hive/gen"
version=$(thrift --version)
case "$version" in
  *" 0.17."*) ;;
  *) echo "need the Thrift compiler 0.17 (the runtime's version), found: $version" >&2; exit 1 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# js:node = CommonJS for Node (gen/package.json marks the folder CommonJS), es6 = classes and
# promise-returning calls, ts = declaration files beside the code.
thrift --gen js:node,es6,ts -out "$out" hive_metastore.thrift
cp "$out"/ThriftHiveMetastore.js "$out"/ThriftHiveMetastore.d.ts \
  "$out"/hive_metastore_types.js "$out"/hive_metastore_types.d.ts .
