"""The chaos soak in the suite: 3 minutes, seed 1 (bin/netec-testbed soak's code), on a testbed
of 10 DataNodes (RS(6,3) with one to spare) with 100 Mbit/s links. Clients write, read and
delete NETEC-3-2 and NETEC-6-3 files through the plugin's client and Hadoop's while DataNodes
are killed, a second one during a repair, the switch restarted and links cut. Passes only if no
read returned wrong bytes, every file the journal kept reads back equal through both clients
and passes Hadoop's verifyEC, fsck says HEALTHY, no replica is left in rbw, and every
reconstruction task the routers recorded was served or failed while a fault was under way.

Needs root and iproute2 (SKIP otherwise, a failure under NETEC_REQUIRE_ENV=1). The one-hour
run is a benchmark (docs/soak-report.md).
"""

import pytest

import testbed_env
from netec_testbed import Config
from netec_testbed import soak

SEED = 1


@pytest.fixture(scope="module")
def tb():
    yield from testbed_env.running(
        Config(prefix="nsk", datanodes=10, block_size=2 << 20, link="100mbit",
               route_timeout_ms=10000,
               hdfs={"dfs.namenode.reconstruction.pending.timeout-sec": "15"}),
        "the chaos soak")


def test_schedule_is_the_seeds():
    assert soak.schedule(SEED) == soak.schedule(SEED)
    assert soak.schedule(SEED) != soak.schedule(SEED + 1)
    assert {k for k, _, _, _ in soak.schedule(SEED)} == set(soak.KINDS)


def test_three_minute_soak_loses_nothing(tb, tmp_path):
    s = soak.Soak(tb, SEED)
    passed = s.run(3)
    text = soak.report(s, "src/test/testbed/test_soak.py (3 min, seed %d)" % SEED,
                       str(tmp_path))
    print(text)
    assert s.faults, "no fault was injected"
    kinds = {f["kind"] for f in s.faults}
    assert kinds & {"datanode_revived", "datanode_left_dead", "second_during_repair"}, kinds
    ops = s.ops()
    assert any(o["op"] == "write" and o["ok"] for o in ops), "nothing was written"
    assert any(o["op"] in ("read", "pread") and o["ok"] for o in ops), "nothing was read"
    wrong = [o for o in ops if o.get("first_bad", -1) >= 0]
    assert not wrong, "reads returned wrong bytes: %s" % wrong[:5]
    last = s.checks[-1]
    assert last["files"] > 0 and last["bytes"] > 0, last
    assert passed, "a check failed: %s" % s.checks
    assert any(t["route"] != "none" for t in s.tasks.values()), "no task was recorded served"
