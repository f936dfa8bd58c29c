"""Racks on the testbed (bin/netec-testbed up --racks 3 --oversubscription 4): three racks of
four DataNodes (the client in rack 1), each rack a bridge of its own joined to the spine by an uplink shaped to its
host links' sum / 4, Hadoop's rack awareness from the testbed's topology script. The NameNode
sees the racks and places a NETEC-6-3 group's nine internal blocks three to a rack
(BlockPlacementPolicyRackFaultTolerant, the EC default); the uplink counters see what crosses
racks when a client in rack 1 reads the file; a lost block is rebuilt, byte for byte, with
the DataNodes spread over racks, through the switches of the racks (a software switch in each,
netec.switch.racks: each remote rack's survivors summed on its own switch, one stream over its
uplink) and (the switches killed) through the INEC chain planned by rack, whose partial
results leave each remote rack once (the uplink counters: one rebuilt block's worth out of
each remote rack, at most two per rebuilt block in all).

Needs root and iproute2. Without them each test SKIPs with the reason, unless
NETEC_REQUIRE_ENV=1 (set by .ci/run), which turns the skip into a failure.
"""

import collections

import pytest

from netec_testbed import Config
from netec_testbed import scenario

POLICY = "NETEC-6-3-1024k"
BLOCK = 2 << 20
SIZE = 6 * BLOCK  # one full block group: 6 data units of 2 MiB, 3 parity units


@pytest.fixture(scope="module")
def tb(testbed_running):
    yield from testbed_running(
        Config(prefix="ntk", datanodes=12, racks=3, oversubscription=4, link="100mbit",
               block_size=BLOCK, route_order="switch,inec,native", inec_scheme="ecpipe"),
        "testbed racks")


def test_the_racks_are_built_shaped_and_seen_by_the_namenode(tb):
    status = tb.status()
    assert "racks: 3 on a spine" in status and "1:4" in status, status
    for r in (1, 2, 3):
        # rack 1: the client and four DataNodes at 100 Mbit/s, over 4; racks 2, 3: four
        want = "125Mbit" if r == 1 else "100Mbit"
        for q in tb.fabric.uplink_qdiscs(r):  # out of the rack, into it
            assert "tbf" in q and "rate %s" % want in q, (r, q)
    p = tb.exec_command("cl", ["hdfs", "dfsadmin", "-printTopology"], capture_output=True,
                        text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    racks = collections.defaultdict(set)
    rack = None
    for line in p.stdout.splitlines():
        if line.startswith("Rack: "):
            rack = line.split()[1]
        elif line.strip() and rack:
            racks[rack].add(tb.host_of(line.split()[0]))
    assert dict(racks) == {"/rack%d" % r: set(tb.rack_hosts(r)) - {"cl", "sw%d" % r}
                           for r in (1, 2, 3)}


def test_a_group_is_placed_three_to_a_rack_and_what_crosses_racks_is_counted(tb):
    files = scenario.Files(tb, "/racks/placed", POLICY, 1, SIZE, seed=5).write()
    units = files.locate()
    assert len(units) == 9
    per_rack = collections.Counter(tb.rack(u[4]) for u in units)
    assert per_rack == {1: 3, 2: 3, 3: 3}, units
    # a client in rack 1 reads the file: every data unit held in racks 2 and 3 enters rack 1
    # over its uplink, and leaves its own rack over that rack's
    remote = collections.Counter(tb.rack(u[4]) for u in units if u[2] < 6 and tb.rack(u[4]) != 1)
    before = tb.uplink_counters()
    files.verify()
    after = tb.uplink_counters()
    into_rack1 = after[1][0] - before[1][0]
    assert into_rack1 >= BLOCK * sum(remote.values()), (into_rack1, remote)
    for r in (2, 3):
        out = after[r][1] - before[r][1]
        assert out >= BLOCK * remote[r], (r, out, remote)
    files.remove()


def test_a_lost_block_is_rebuilt_through_the_racks_switches_one_partial_sum_per_remote_rack(tb):
    # a software switch in every rack (sw1..sw3, netec.switch.racks): the task runs on the
    # rebuilding node's rack's switch; a remote rack holding two or more of its survivors
    # sums them on its own switch and sends one stream over its uplink, a lone survivor
    # streams on its own: either way one stream leaves each remote rack
    files = scenario.Files(tb, "/racks/lost", POLICY, 1, SIZE, seed=6).write()
    summed = {sw: tb.jmx(sw, "switch").get("TasksPartialSums", 0) for sw in tb.rack_switches}
    o = scenario.lose_and_rebuild(tb, files)
    assert o.lost_blocks, "the victim held no blocks"
    bad = {b: c for b, c in o.rebuilt.items() if not c or not all(eq for _, eq in c)}
    assert not bad, "lost blocks missing or differing (block: [(host, equal)]): %s" % bad
    assert set(o.served_by) == {"switch"}, o.tasks
    summed = {sw: tb.jmx(sw, "switch").get("TasksPartialSums", 0) - n
              for sw, n in summed.items()}
    readers = {tb.rack(t) for t in o.targets}
    print("switch by rack: %.3f cross-rack bytes per rebuilt byte, uplinks %s, partial sums "
          "%s, readers in racks %s" % (o.cross_rack_per_byte, o.uplinks, summed, readers))
    assert sum(summed.values()) >= len(o.lost_blocks), "no rack summed its survivors: %s" % summed
    assert not any(summed["sw%d" % r] for r in readers), "a reader's rack summed for itself"
    # the byte counts (TCP/IP headers, about 4% at this MSS, the reader's ACKs, heartbeats)
    # allow 15% more than one stream; the flat switch sends three from a rack of three
    for r, (_, out) in o.uplinks.items():
        if r not in readers:
            assert out <= 1.15 * o.bytes, ("rack %d sent more than one stream" % r, o.uplinks)
    assert o.cross_rack_per_byte <= 2 * 1.15, (o.cross_rack_per_byte, o.uplinks)
    files.verify()
    assert len(files.locate()) == 9, "every unit stored again"
    files.remove()


def test_the_inec_chain_planned_by_rack_crosses_each_uplink_once(tb):
    # the INEC chain, planned by rack: k survivors from the rebuilding node's rack and the
    # fullest others, each rack's visited together; every partial result crosses one uplink.
    # The switches are killed first (the module's last test), so the route order switch,inec
    # falls through to INEC on every task, as it would for an operator whose switches died.
    for sw in ["sw"] + tb.rack_switches:
        tb.kill(sw)
    files = scenario.Files(tb, "/racks/chain", POLICY, 1, SIZE, seed=7).write()
    placed = files.locate()
    o = scenario.lose_and_rebuild(tb, files)
    bad = {b: c for b, c in o.rebuilt.items() if not c or not all(eq for _, eq in c)}
    assert not bad, "lost blocks missing or differing (block: [(host, equal)]): %s" % bad
    assert set(o.served_by) == {"inec"}, o.tasks
    target = sorted(o.targets)[0]
    # racks holding survivors besides the rebuilding node's: at most two, each crossing once;
    # the byte count (frames, heartbeats) allows a tenth more
    remote = {tb.rack(u[4]) for u in placed if u[4] not in o.victims} - {tb.rack(target)}
    print("INEC chain by rack: %.3f cross-rack bytes per rebuilt byte, uplinks %s"
          % (o.cross_rack_per_byte, o.uplinks))
    assert o.cross_rack_per_byte <= 2 * 1.1, (o.cross_rack_per_byte, o.uplinks, target, remote)
    files.verify()
    files.remove()
