#!/usr/bin/env bash
# Installs what the build, tests, demo and benchmarks need on a fresh Debian/Ubuntu machine.
# Idempotent: installs only what is missing. JDK 17 and Maven are expected on the PATH.
set -euo pipefail

sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
need=()
# ISA-L: libnetec.so dlopen's libisal.so.2 (the native coder and the benchmarks use it).
# grep reads all of ldconfig's list: with -q it would stop at the match, ldconfig would die of
# SIGPIPE, and pipefail would call ISA-L missing (and reinstall it on every run).
{ ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep 'libisal\.so\.2 ' >/dev/null ||
  need+=(libisal2)
command -v cmake >/dev/null || need+=(cmake)
# The testbed (bin/netec-testbed, its tests and benchmark): ip and tc.
{ command -v ip && command -v tc; } >/dev/null 2>&1 || need+=(iproute2)
# The testbed's BMv2 fabric (--fabric bmv2): offloads off on its veths.
command -v ethtool >/dev/null || need+=(ethtool)
# rdma-core headers: the INEC engine's verbs transport (libibverbs itself is dlopen'ed at run time).
[ -f /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)
command -v cc >/dev/null || need+=(gcc)
# clang with libFuzzer: scripts/fuzz.sh (the C fuzz targets of the INEC engine).
if ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' |
    clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  need+=(clang libclang-rt-14-dev)
fi
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
# pytest 7 or later (pyproject.toml's pythonpath, which finds the Python packages in the source
# tree, is 7's): pip where the Python allows it (pyenv, venv; it upgrades an older one); Debian's
# package for the system Python, which refuses pip installs (PEP 668; bookworm's is 7.2).
pytest7() { python3 -c 'import sys, pytest; sys.exit(int(pytest.__version__.split(".")[0]) < 7)' 2>/dev/null; }
if ! pytest7 && ! python3 -m pip install -q 'pytest>=7' 2>/dev/null; then
  need+=(python3-pytest)
fi

if ((${#need[@]})); then
  echo "setup: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# scapy: the switch-p4 tests build and parse the packets the P4 pipeline model sees.
if ! python3 -c 'import scapy' 2>/dev/null && ! python3 -m pip install -q scapy 2>/dev/null; then
  echo "setup: installing python3-scapy"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends python3-scapy >/dev/null
fi

# matplotlib: the benchmarks' plots (scripts/plot_bench.py, the testbed's report) and their test.
if ! python3 -c 'import matplotlib' 2>/dev/null && ! python3 -m pip install -q matplotlib 2>/dev/null; then
  echo "setup: installing python3-matplotlib"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null
fi

# numpy: the simulator's fair-share solver (sim/netec_sim/fairshare.py); matplotlib brings it,
# but the simulator does not need the plots.
if ! python3 -c 'import numpy' 2>/dev/null && ! python3 -m pip install -q numpy 2>/dev/null; then
  echo "setup: installing python3-numpy"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends python3-numpy >/dev/null
fi

# An older system's python3-pytest (Ubuntu 22.04's is 6.2) is too old; such a Python still takes
# pip installs (no PEP 668), so pip brings a newer one.
if ! pytest7; then
  echo "setup: python3's pytest is older than 7; installing pytest>=7 with pip"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  python3 -m pip install -q 'pytest>=7' || { echo "setup: pip could not install pytest>=7" >&2; exit 1; }
fi

# thrift: the control plane's BMv2 backend, where the P4 toolchain is (README.md, P4 toolchain).
if PYTHONPATH="$(dirname "$0")/../switch-p4" python3 -m netec_p4.bmv2.p4tools has simple_switch &&
    ! python3 -c 'import thrift' 2>/dev/null; then
  python3 -m pip install -q thrift || { echo "setup: pip could not install thrift" >&2; exit 1; }
fi

pytest7 || { echo "setup: pytest 7 or later not importable by python3" >&2; exit 1; }
python3 -c 'import scapy' 2>/dev/null || { echo "setup: scapy not importable by python3" >&2; exit 1; }

for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "setup: $tool not found (need JDK 17 and Maven)" >&2; exit 1; }
done
