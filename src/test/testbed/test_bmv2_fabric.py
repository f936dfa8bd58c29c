"""The P4 switch in the data path: a testbed whose fabric is BMv2 (simple_switch running
switch-p4's datagram XOR program, p4fabric.py) between real Hadoop daemons in network
namespaces. Every packet between hosts passes through the P4 pipeline; the switch host runs
the P4 control plane (thrift backend), which the DataNodes' switch route sets tasks up with.

A DataNode is killed with kill -9; the NameNode schedules the reconstruction of its internal
block; the rebuilding DataNode's reader and the survivors' agents (the plugin's own Java code,
in datagram mode with pre-multiplied units of 256 bytes a packet) stream through BMv2, whose
registers XOR the stripes; the rebuilt block must equal, byte for byte, the copy the dead
DataNode left on its disk, and BMv2's own verdict counters must show the stripes completed in
the data plane. A client's degraded read before the rebuild returns the written bytes.

Needs the P4 toolchain (p4c-bm2-ss, simple_switch: README.md, "P4 toolchain"): without it the
test SKIPs, also in CI, where a fresh machine cannot have it. With the toolchain it needs root,
which NETEC_REQUIRE_ENV=1 (set by .ci/run) requires.
"""

import pytest

from netec_testbed import Config
from netec_testbed import scenario

POLICY = "NETEC-3-2-1024k"
CELL = 1 << 20
# One block group: two full 1 MiB cells and a short third (200,000 bytes, 782 stripes of
# 256 bytes); parity units of 1 MiB. Whichever unit the victim holds, BMv2 rebuilds it.
SIZE = 2 * CELL + 200000
V_AGGREGATE, V_COMPLETE = 5, 6  # switch-p4/p4src/include/netec_logic.p4


@pytest.fixture(scope="module")
def tb(testbed_running):
    yield from testbed_running(
        Config(prefix="ntp", fabric="bmv2", datanodes=6, block_size=CELL,
               route_order="switch,native", route_timeout_ms=20000,
               hdfs={"dfs.namenode.reconstruction.pending.timeout-sec": "60"}),
        "BMv2 fabric")


def test_block_rebuilt_through_bmv2(tb):
    before = tb.p4_counters()
    files = scenario.Files(tb, "/p4", POLICY, 1, SIZE, seed=5).write()
    o = scenario.lose_and_rebuild(tb, files, during=lambda t, _: files.verify())
    print(scenario.describe(o))
    after = tb.p4_counters()
    print("BMv2 verdicts (DATA packets): %s" % [a - b for a, b in zip(after, before)])
    assert o.lost_blocks, "the victim held no block"
    bad = {b: c for b, c in o.rebuilt.items() if not c or not all(eq for _, eq in c)}
    assert not bad, "lost blocks missing or differing (block: [(host, equal)]): %s" % bad
    assert set(o.served_by) == {"switch"}, o.tasks
    # Every stripe of the rebuilt unit completed in BMv2's registers: 3 survivors a stripe,
    # the last of them completes it. Degraded reads may add stripes of their own.
    stripes = -(-sum(t["bytes"] for t in o.tasks) // 256)
    completed = after[V_COMPLETE] - before[V_COMPLETE]
    aggregated = after[V_AGGREGATE] - before[V_AGGREGATE]
    assert completed >= stripes, (completed, stripes)
    assert aggregated >= 2 * stripes, (aggregated, stripes)
    files.verify()
