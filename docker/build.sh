#!/usr/bin/env bash
# Builds the NetEC-HDFS image (docker/Dockerfile): Hadoop's jars as the Maven build resolves
# them, our jar (libnetec.so inside), conf/, a JRE and ISA-L from BASE's Debian packages.
#   docker/build.sh [--hadoop 3.4.3|3.5.0] [--base IMAGE] [--tag TAG]
# Defaults: Hadoop 3.4.3, BASE debian:bookworm-slim, TAG netec-hdfs:HADOOP.
set -euo pipefail
cd "$(dirname "$0")/.."
hadoop=3.4.3 base=debian:bookworm-slim tag=
while (($#)); do
  case "$1" in
    --hadoop) hadoop=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    *) echo "docker/build.sh: unknown option $1 (--hadoop, --base, --tag)" >&2; exit 2 ;;
  esac
done
case "$hadoop" in
  3.4.3) profile=() ;;
  3.5.0) profile=(-Phadoop-3.5) ;;
  *) echo "docker/build.sh: --hadoop $hadoop: 3.4.3 or 3.5.0" >&2; exit 2 ;;
esac
tag=${tag:-netec-hdfs:$hadoop}
ctx=hdfs-netec-policy/target/docker-context
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { mvn -B -ntp -q -DskipTests package "${profile[@]}" &&
       mvn -B -ntp -q -pl hdfs-netec-policy dependency:build-classpath -Dmdep.includeScope=compile \
         -Dmdep.outputFile="$PWD/$ctx.classpath" "${profile[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
rm -rf "$ctx"
mkdir -p "$ctx/lib" "$ctx/conf"
tr ':' '\n' <"$ctx.classpath" | while IFS= read -r jar; do cp "$jar" "$ctx/lib/"; done
cp hdfs-netec-policy/target/hdfs-netec-policy-0.1.0-SNAPSHOT.jar "$ctx/hdfs-netec-policy.jar"
cp conf/*.xml conf/*.properties "$ctx/conf/"
cp docker/Dockerfile docker/entrypoint.sh "$ctx/"
# The build's RUN steps fetch Debian packages on the host's network. Its output (and the
# client's notice about the legacy builder) is shown only if the build fails.
if ! docker build --network host --build-arg BASE="$base" --build-arg HADOOP_VERSION="$hadoop" \
    -t "$tag" "$ctx" >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
echo "$tag"
