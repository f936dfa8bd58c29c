"""Two levels of P4 switches between real Hadoop daemons: two racks (bin/netec-testbed up
--racks 2 --rack-switch bmv2), each rack's switch BMv2 one-armed on its bridge, running the
datagram XOR program, with the P4 control plane on the rack's switch host. A DataNode is
killed; its internal block is rebuilt through a tree of tasks (docs/protocol.md, "Partial sums
over datagrams"): the rebuilding DataNode's reader sets the other rack's survivors up as a
child task on that rack's BMv2, the parent on its own rack's BMv2, and attaches the child to
the parent; the child's registers XOR its survivors' pre-multiplied packets into one stream,
which crosses the uplink as the parent's sender, and the parent's registers XOR it with the
local survivors into the rebuilt unit. The rebuilt block must equal, byte for byte, the copy
the dead DataNode left; both BMv2s' own counters must show the stripes completed, and the
child's rack's uplink must carry one stream out, not one per survivor.

Needs the P4 toolchain (p4c-bm2-ss, simple_switch: README.md, "P4 toolchain"): without it the
test SKIPs, also in CI, where a fresh machine cannot have it. With the toolchain it needs root,
which NETEC_REQUIRE_ENV=1 (set by .ci/run) requires.
"""

import pytest

from netec_testbed import Config
from netec_testbed import scenario

POLICY = "NETEC-6-3-1024k"
CELL = 1 << 20
SIZE = 6 * CELL  # one full group: six data units and three parity units of 1 MiB
V_AGGREGATE, V_COMPLETE = 5, 6  # switch-p4/p4src/include/netec_logic.p4
PAYLOAD = 256  # the program's bytes a packet (p4fabric.DATANODE_KEYS)


@pytest.fixture(scope="module")
def tb(testbed_running):
    yield from testbed_running(
        Config(prefix="ntr", racks=2, rack_switch="bmv2", datanodes=10, block_size=CELL,
               route_order="switch,native", route_timeout_ms=60000,
               hdfs={"dfs.namenode.reconstruction.pending.timeout-sec": "120"}),
        "P4 rack switches")


def test_a_block_is_rebuilt_through_a_partial_sum_from_one_bmv2_to_another(tb):
    before = {r: tb.p4_counters(r) for r in (1, 2)}
    files = scenario.Files(tb, "/p4tree", POLICY, 1, SIZE, seed=8).write()
    o = scenario.lose_and_rebuild(tb, files)
    print(scenario.describe(o))
    after = {r: tb.p4_counters(r) for r in (1, 2)}
    done = {r: [a - b for a, b in zip(after[r], before[r])] for r in (1, 2)}
    print("BMv2 verdicts by rack (DATA packets): %s" % done)
    assert o.lost_blocks, "the victim held no block"
    bad = {b: c for b, c in o.rebuilt.items() if not c or not all(eq for _, eq in c)}
    assert not bad, "lost blocks missing or differing (block: [(host, equal)]): %s" % bad
    assert set(o.served_by) == {"switch"}, o.tasks
    readers = {tb.rack(t) for t in o.targets}
    assert len(readers) == 1, o.targets
    reader = readers.pop()
    child = 3 - reader
    stripes = -(-o.bytes // PAYLOAD)
    # the parent (the reader's rack) completed every stripe; so did the child, whose two or
    # more survivors it summed (each of its stripes' last packet leaves as one partial sum)
    assert done[reader][V_COMPLETE] >= stripes, (done, stripes)
    assert done[child][V_COMPLETE] >= stripes, ("the other rack summed nothing", done, stripes)
    assert done[child][V_AGGREGATE] >= stripes, ("a child of one survivor", done, stripes)
    # what left the child's rack is its partial sums: a datagram a stripe it completed (the
    # retransmissions the reader asked for included), not its survivors' packets, of which
    # it took in two or more a stripe
    _, out = o.uplinks[child]
    frame = PAYLOAD + 20 + 8 + 20 + 14  # NetEC, UDP, IPv4, Ethernet headers
    sums = done[child][V_COMPLETE]
    taken_in = done[child][V_AGGREGATE] + done[child][V_COMPLETE]
    print("rack %d (child) sent %d bytes: %d partial sums of %d bytes (%d rebuilt bytes), its "
          "survivors sent it %d packets" % (child, out, sums, frame, o.bytes, taken_in))
    # (the rack's DataNodes' heartbeats and reports to the NameNode on the spine cross too,
    # about 2 KB/s: a tenth more and 256 KiB)
    assert out <= 1.1 * sums * frame + (256 << 10), (
        "more left the child's rack than its sums", out, sums, o.uplinks)
    assert out < 0.75 * taken_in * frame, ("the survivors' packets crossed", out, taken_in)
    files.verify()
