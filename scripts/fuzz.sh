#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser of peer input, each target for a bounded time:
#   Java (Jazzer, the @FuzzTest methods): NetEC packets, setup requests and answers, the HELLO a
#     survivor agent takes, INEC join requests, proof requests and answers, block-token proofs;
#   C (libFuzzer under ASan + UBSan, built with clang): the INEC engine's stream frames (checked
#     against a reference reader) and its hello.
# Seeds come from the shared vectors, valid messages and the kept regression inputs.
#
#   scripts/fuzz.sh                 # every target, FUZZ_SECONDS (default 10) each: what CI runs
#   FUZZ_SECONDS=600 scripts/fuzz.sh packet frames   # longer, on chosen targets
#
# A finding fails the script and names the input file. Keep it as a regression test once fixed:
# Java: hdfs-netec-policy/src/test/resources/<package path>/<Class>Inputs/<target>/ (the suite's
# regression mode replays it); C: native/fuzz/regressions/<target>/ (ctest replays it).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-10}
out=hdfs-netec-policy/target/fuzz
java_targets=(io.netec.hdfs.switchroute.wire.WireFuzzTest:packet
  io.netec.hdfs.switchroute.wire.WireFuzzTest:setupRequest
  io.netec.hdfs.switchroute.wire.WireFuzzTest:setupAnswer
  io.netec.hdfs.switchroute.wire.WireFuzzTest:streamHello
  io.netec.hdfs.switchroute.wire.WireFuzzTest:readerHello
  io.netec.hdfs.inecroute.JoinRequestFuzzTest:join
  io.netec.hdfs.proof.ProofWireFuzzTest:proofRequest
  io.netec.hdfs.proof.ProofWireFuzzTest:proofAnswer
  io.netec.hdfs.route.TokenProofFuzzTest:tokenProof)
c_targets=(frames hello)
wanted=("$@")
want() { ((${#wanted[@]} == 0)) || [[ " ${wanted[*]} " == *" $1 "* ]]; }

failed=()
cp=$(bash scripts/test-classpath.sh)
rm -rf "$out"
mkdir -p "$out/corpus" "$out/findings"
java -cp "$cp" -Dnetec.repo.root="$PWD" io.netec.hdfs.switchroute.wire.WireFuzzTest "$out/corpus"
java -cp "$cp" io.netec.hdfs.inecroute.JoinRequestFuzzTest "$out/corpus"
java -cp "$cp" io.netec.hdfs.proof.ProofWireFuzzTest "$out/corpus"
java -cp "$cp" io.netec.hdfs.route.TokenProofFuzzTest "$out/corpus"
# fuzz KIND NAME COMMAND...: one target; a finding is reported and remembered.
fuzz() {
  local kind=$1 name=$2 log="$out/$2.log"
  shift 2
  printf 'fuzz (%s) %-14s %3ss ... ' "$kind" "$name" "$seconds"
  # -timeout: one input's limit. The first input also pays for Jazzer instrumenting the
  # parser's libraries (Jackson: seconds), which took over 10 s on a loaded 2-core machine
  # (twice, on the empty input); an input that hangs one of our parsers takes far longer.
  if "$@" -max_total_time="$seconds" -timeout=30 -artifact_prefix="$out/findings/$name-" \
      >"$log" 2>&1; then
    echo "$(grep -o 'Done [0-9]* runs' "$log" | tail -1 || true), no finding"
  else
    echo "FINDING (log: $log)"
    grep -E '== Java Exception|Caused by|at io\.netec|ERROR|SUMMARY|differs|status|Test unit written' \
      "$log" | head -20 || true
    failed+=("$name")
  fi
}

for t in "${java_targets[@]}"; do
  class=${t%%:*} method=${t##*:}
  want "$method" || continue
  mkdir -p "$out/corpus/$method"
  fuzz Jazzer "$method" java -Xmx1g -cp "$cp" -Dnetec.repo.root="$PWD" \
    com.code_intelligence.jazzer.Jazzer --target_class="$class" --target_method="$method" \
    --instrumentation_includes='io.netec.**:com.fasterxml.jackson.**' -rss_limit_mb=2048 \
    "$out/corpus/$method"
done

# C: clang's libFuzzer; the build lives outside the source tree like the other native builds.
if want frames || want hello; then
  build=native/build-fuzz
  CC=clang cmake -S native -B "$build" -DNETEC_FUZZ=ON >/dev/null
  cmake --build "$build" --parallel 2 --target fuzz_frames fuzz_hello >/dev/null
fi
for t in "${c_targets[@]}"; do
  want "$t" || continue
  corpus="$out/corpus/c-$t"
  mkdir -p "$corpus"
  cp native/fuzz/regressions/"$t"/* "$corpus"/
  fuzz libFuzzer "$t" native/build-fuzz/fuzz_"$t" -max_len=4096 "$corpus"
done

if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}; inputs in $out/findings/" >&2
  exit 1
fi
echo "fuzz: no findings"
