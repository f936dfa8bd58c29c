#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what is missing, then runs
#   1. every test on Hadoop 3.4.3 with the native (ISA-L) coder,
#   2. what the native library changes, again with it forced off (pure-Java coder,
#      fingerprint and checksum; the INEC route declining),
#   3. every test that meets Hadoop, on Hadoop 3.5.0 (profile hadoop-3.5),
#   4. the Python packages' unit tests (switch-p4/tests, testbed/tests); the reference model of
#      the switch against the shared test vectors; the P4 programs through p4test, p4c-bm2-ss
#      and p4c-barefoot, and the v1model twin on BMv2 against the same vectors (these SKIP,
#      even in CI, where the P4 toolchain is absent: README.md, P4 toolchain),
#   5. the C tests of the INEC engine, under AddressSanitizer and UndefinedBehaviorSanitizer,
#   6. coverage-guided fuzzing of every parser of peer input (Jazzer and libFuzzer), 10 s a target,
#   7. process-level faults on the testbed: real Hadoop daemons in network namespaces, and a
#      3-minute chaos soak (load and faults together, every file checked at the end),
#   8. the container cluster: images built, docker/compose.yaml started, DataNode containers
#      killed and rebuilt through each route, bytes compared (last: Docker changes the host's
#      iptables FORWARD policy).
# Steps that need the environment (root, network namespaces, a Docker engine) print one SKIP line where they
# cannot run; NETEC_REQUIRE_ENV=1 (set by .ci/run) turns such a skip into a failure.
# Exits non-zero if any run fails. .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

mvn=(mvn -B -ntp)
step() { printf '\n=== %s ===\n' "$*"; }

step "Hadoop 3.4.3, native coder"
"${mvn[@]}" clean verify

step "Hadoop 3.4.3, native library forced off (-Dnetec.native.disable=true)"
# What libnetec.so changes, run again without it: the coders (encoding every write, decoding
# every rebuild and degraded read), the proofs' fingerprint, the packets' checksum (its
# vectors, and end to end through the switch over TCP and datagrams), and the INEC route
# declining (InecRouteTest's RS(3,2) chain; the other INEC shapes need the engine), each
# parameterized cluster suite in the shapes -Dnetec.test.shapes names; of the switch route's
# faults, those that decode (native after a dead switch or survivor) or prove a token (the
# fingerprint), not the agents replaced by spares. Suites whose subject
# is elsewhere (Hadoop's duties, security, the route seam, the plugin's removal, the parsers'
# fuzzing) ran in the pass above and run again on 3.5.
"${mvn[@]}" verify -Dnetec.native.disable=true -Dtest='NetecCoderTest,RsCoderUnlistedTest,'\
'FingerprintTest,WireFormatTest,WireFuzzTest,SharedVectorTest,SwitchTaskTest,'\
'ProofServiceTest,ReadTapsTest,NetecDataNodePluginTest,'\
'NetecCoderClusterTest,SwitchRouteTest,InecRouteTest,ClientDegradedReadTest,ClientStreamTest,'\
'IntegrityTest,SwitchRouteFaultTest#switchDying*+survivorDying*+withBlockTokens*' \
  -Dnetec.test.shapes=rs63,rs32-premultiplied,rs63-datagrams,rs32-chain


step "Hadoop 3.5.0 (-Phadoop-3.5)"
# What the Hadoop version changes: every suite that meets Hadoop's classes (the coder API,
# tokens, Configuration, the DataNode's reconstruction and the client's striped stream, the
# duties, security, the plugin's removal) or the Netty Hadoop brings (the switch route over
# TCP and datagrams end to end, the INEC join server's limits in InecRepairTest). Not run
# again here: our own parsers' fuzzing and wire format, the switch's protocol state machines
# and SoftwareSwitchTest (no Hadoop class; the Netty under them runs end to end in the switch
# route suites here), the switch's aggregation by rack (SwitchRacksTest, our sockets;
# SwitchRackAwareTest, whose hand-over from Hadoop's task, the reader's rack, is
# InecRackAwareTest's here too), the routes' fault suites (our sockets; the hand-over to
# Hadoop is RouteSeamTest's), the parameterized cluster suites' RS(3,2) shapes (the
# pre-multiplied TCP shape too: datagrams meet the same Netty), and the suites whose Hadoop seam
# another here meets the same way: one router on both sides, the INEC route on a DataNode
# (InecRackAwareTest's here) and on a client (the client's stream is ClientDegradedReadTest's
# and ClientStreamTest's).
"${mvn[@]}" clean verify -Phadoop-3.5 -Dtest='!WireFuzzTest,!JoinRequestFuzzTest,'\
'!ProofWireFuzzTest,!TokenProofFuzzTest,!RepairGraphTest,!SharedVectorTest,!SwitchTaskTest,'\
'!WireFormatTest,!TaskTableTest,!SendWindowTest,!ConnectionCapsTest,!SoftwareSwitchTest,'\
'!SwitchRacksTest,!SwitchRackAwareTest,'\
'!LogLimiterTest,!CostOrderTest,!ReadCostTest,!RackAwareTest,'\
'!SwitchRouteFaultTest,!SwitchRouteLinkFaultTest,!InecRouteFaultTest,'\
'!InecRouteTest,!OneRouterBothSidesTest,!InecClientDegradedReadTest' \
  -Dnetec.test.shapes=rs63,rs63-datagrams

step "Python: switch model, control plane, testbed units, simulator, shared vectors; P4 compilers and BMv2 where the P4 toolchain is"
# pyproject.toml's pythonpath finds netec_p4, netec_testbed and netec_sim in the source tree
python3 -m pytest -q -rs switch-p4/tests testbed/tests sim/tests src/test/python

step "C: INEC engine under AddressSanitizer and UndefinedBehaviorSanitizer"
cmake -S native -B native/build-asan -DNETEC_SANITIZE=ON >/dev/null
cmake --build native/build-asan --parallel 2 >/dev/null
(cd native/build-asan && ctest --output-on-failure)

step "Fuzzing: every parser of peer input, ${FUZZ_SECONDS:-10} s a target (scripts/fuzz.sh)"
bash scripts/fuzz.sh

step "Testbed: process-level faults (Hadoop daemons in network namespaces, kill -9, link down), chaos soak"
# --durations: each test's time in the log, to see where the step's minutes go
python3 -m pytest -q -rs --durations=0 src/test/testbed

step "Containers: docker/compose.yaml cluster, DataNode containers killed, rebuilt through each route"
bash scripts/docker-test.sh

step "all suites passed"
