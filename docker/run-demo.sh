#!/usr/bin/env bash
# The demo's scenario on docker/compose.yaml's cluster: for switch, inec and native in turn,
# NETEC-6-3 files written, the DataNode container holding most units killed (docker kill),
# every lost block rebuilt through that route and compared byte for byte; then the table.
# Exit 0 only if every byte matched. Needs a running Docker engine and docker-compose.
#   docker/run-demo.sh [--image netec-hdfs:3.4.3] [--datanodes 10] [--keep] ...
set -euo pipefail
cd "$(dirname "$0")/.."
# the testbed's package and the P4 switch's, which netec_testbed imports (pyproject.toml)
PYTHONPATH="$PWD/testbed:$PWD/switch-p4${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m netec_testbed.containers "$@"
