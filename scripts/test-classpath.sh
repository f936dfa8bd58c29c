#!/usr/bin/env bash
# Builds the plugin and its test classes quietly (showing the log only on failure) and prints
# the classpath that runs the test-scope programs (demo, benchmarks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
log=$(mktemp)
cpfile=hdfs-netec-policy/target/test-classpath.txt
if ! { mvn -B -ntp -pl hdfs-netec-policy -am test-compile &&
       mvn -B -ntp -pl hdfs-netec-policy dependency:build-classpath -Dmdep.includeScope=test \
         -Dmdep.outputFile="$PWD/$cpfile"; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "$PWD/hdfs-netec-policy/target/test-classes:$PWD/hdfs-netec-policy/target/classes:$(cat "$cpfile")"
