"""The simulator's pieces, each against a case worked by hand."""

import math

import pytest

from netec_sim import fairshare, network, workload


def test_max_min_shares_a_bottleneck_and_gives_the_rest_elsewhere():
    cap = {"a": 10.0, "b": 4.0}.__getitem__
    # x uses a alone, y uses a and b: y is held at 4 by b, x takes the rest of a
    rates = fairshare.max_min_rates({"x": {"a": 1.0}, "y": {"a": 1.0, "b": 1.0}}, cap)
    assert rates == pytest.approx({"x": 6.0, "y": 4.0})
    # a task that needs a link twice (two of its streams cross it) gets half its share
    rates = fairshare.max_min_rates({"x": {"a": 1.0}, "y": {"a": 2.0}}, cap)
    assert rates == pytest.approx({"x": 10 / 3, "y": 10 / 3})


def test_run_moves_bytes_at_the_fair_rate_with_limits_overheads_and_rounds():
    cap = {"l": 10.0}.__getitem__
    one = {"t": (100.0, {"l": 1.0}, "n1")}
    assert fairshare.run(one, cap)[0] == pytest.approx(10.0)
    assert fairshare.run(one, cap, overhead_s=0.5)[0] == pytest.approx(10.5)
    two = {"t": (100.0, {"l": 1.0}, "n1"), "u": (100.0, {"l": 1.0}, "n1")}
    assert fairshare.run(two, cap)[0] == pytest.approx(20.0)  # shared: 5 B/s each
    end, spans = fairshare.run(two, cap, limit=1)  # one at a time on the target
    assert end == pytest.approx(20.0) and spans["u"] == pytest.approx((10.0, 20.0))
    end, spans = fairshare.run(two, cap, start_times={"t": 0.0, "u": 15.0})
    assert end == pytest.approx(25.0) and spans["t"] == pytest.approx((0.0, 10.0))


def test_paths_cross_uplinks_only_between_racks():
    c = network.Cluster(3, 4, 100.0, oversubscription=4)
    assert c.uplink_Bps == pytest.approx(100.0)
    a, b, z = "r0-n0", "r0-n1", "r2-n3"
    assert c.path(a, b) == [("out", a), ("in", b)]
    assert c.path(a, z) == [("out", a), ("up", 0), ("down", 2), ("in", z)]
    assert c.path(a, None) == [("out", a), ("up", 0)]  # to the switch on the spine
    assert c.path(a, ("tor", 0)) == [("out", a)]       # to its own rack's switch
    assert c.path(("tor", 0), ("tor", 2)) == [("up", 0), ("down", 2)]


def test_groups_are_placed_rack_fault_tolerantly_around_the_lost_datanode():
    c = network.Cluster(3, 4, 100.0)
    rec = workload.Recovery(c, 6, 3, 50, seed=3)
    for g in rec.groups:
        assert g[0] == rec.victim and len(set(g)) == 9
        per_rack = [sum(1 for u in g if c.rack(u) == r) for r in range(3)]
        assert max(per_rack) <= math.ceil(9 / 3), per_rack
        t = rec.target(g)
        assert t not in g


def test_cross_rack_bytes_by_route_on_three_racks():
    c = network.Cluster(3, 4, 100.0)
    rec = workload.Recovery(c, 6, 3, 200, seed=5)
    cross = {r: workload.Recovery.cross_rack_per_byte(rec.tasks(r, 1 << 20))
             for r in workload.ROUTES}
    # aggregation at each rack: at most one stream out of each of the two other racks
    assert cross["switch-racks"] <= 2.0
    assert cross["inec-chain"] <= 2.0
    # the switch on the spine: every one of the 6 streams goes up
    assert cross["switch"] == pytest.approx(6.0)
    # native: the survivors outside the target's rack, about 4 of 6
    assert cross["native"] >= 3.5
    assert cross["inec-chain-flat"] > cross["inec-chain"]
    assert cross["replication"] <= 1.0


def test_an_oversubscribed_uplink_slows_native_more_than_aggregation():
    # 3 racks of 4 at 100 B/s, 1:4: uplinks 100 B/s; 12 lost blocks of 1,000 B, no CPU limit
    c = network.Cluster(3, 4, 100.0, oversubscription=4, cores=10 ** 9)
    times = {}
    for route in ("native", "switch-racks"):
        rec = workload.Recovery(c, 6, 3, 12, seed=7)
        tasks = rec.tasks(route, 1000)
        for _, d, _ in tasks.values():
            for res in [r for r in d if r[0] in ("cpu", "thread")]:
                del d[res]
        times[route] = fairshare.run(tasks, c.capacity)[0]
    assert times["native"] > 1.5 * times["switch-racks"], times
