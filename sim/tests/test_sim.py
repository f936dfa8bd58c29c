"""The simulator's pieces, each against a case worked by hand."""

import collections
import io
import json
import random

import numpy as np
import pytest

from netec_sim import cli, fairshare, network, workload


def test_max_min_shares_a_bottleneck_and_gives_the_rest_elsewhere():
    cap = {"a": 10.0, "b": 4.0}.__getitem__
    # x uses a alone, y uses a and b: y is held at 4 by b, x takes the rest of a
    rates = fairshare.max_min_rates({"x": {"a": 1.0}, "y": {"a": 1.0, "b": 1.0}}, cap)
    assert rates == pytest.approx({"x": 6.0, "y": 4.0})
    # a task that needs a link twice (two of its streams cross it) gets half the rate
    rates = fairshare.max_min_rates({"x": {"a": 1.0}, "y": {"a": 2.0}}, cap)
    assert rates == pytest.approx({"x": 10 / 3, "y": 10 / 3})
    # three levels: z held by c, y by b, x takes what is left of a
    cap3 = {"a": 12.0, "b": 5.0, "c": 1.0}.__getitem__
    rates = fairshare.max_min_rates({"x": {"a": 1.0}, "y": {"a": 1.0, "b": 1.0},
                                     "z": {"a": 1.0, "b": 1.0, "c": 1.0}}, cap3)
    assert rates == pytest.approx({"x": 7.0, "y": 4.0, "z": 1.0})


def test_max_min_never_gives_a_resource_more_than_it_has():
    rng = random.Random(4)
    caps = {r: rng.uniform(1, 50) for r in "abcdefgh"}
    for _ in range(50):
        tasks = {i: {r: rng.choice([0.5, 1.0, 2.0, 3.0])
                     for r in rng.sample(sorted(caps), rng.randint(1, 4))} for i in range(30)}
        rates = fairshare.max_min_rates(tasks, caps.__getitem__)
        for r, c in caps.items():
            used = sum(rates[t] * d.get(r, 0.0) for t, d in tasks.items())
            assert used <= c * (1 + 1e-6)
        # max-min: every task is held by a full resource
        for t, d in tasks.items():
            assert any(sum(rates[u] * e.get(r, 0.0) for u, e in tasks.items())
                       >= caps[r] * (1 - 1e-6) for r in d), t


def _reference_rates(tasks, cap):
    """Progressive filling written plainly, one round at a time: the oracle for the solver."""
    rates = {t: (0.0 if any(d > 0 for d in tasks[t].values()) else float("inf")) for t in tasks}
    active = {t for t in tasks if rates[t] == 0.0}
    used = {}
    while active:
        load = {}
        for t in active:
            for r, d in tasks[t].items():
                if d > 0:
                    load[r] = load.get(r, 0.0) + d
        inc = min((cap(r) - used.get(r, 0.0)) / d for r, d in load.items())
        for t in active:
            rates[t] += inc
        for r, d in load.items():
            used[r] = used.get(r, 0.0) + d * inc
        full = {r for r in load if cap(r) - used[r] <= 1e-9 * max(1.0, cap(r))}
        active -= {t for t in active if any(r in full and d > 0 for r, d in tasks[t].items())}
    return rates


def test_fair_share_solves_any_subset_of_its_tasks_as_the_plain_filling_does():
    rng = random.Random(7)
    caps = {r: rng.uniform(1, 50) for r in "abcdefghij"}
    for _ in range(40):
        tasks = {i: {r: rng.choice([0.0, 0.5, 1.0, 2.0, 3.0])
                     for r in rng.sample(sorted(caps), rng.randint(1, 4))} for i in range(25)}
        share = fairshare.FairShare(tasks, caps.__getitem__)
        moving = [t for t in tasks if rng.random() < 0.6]
        mask = np.zeros(len(tasks), dtype=bool)
        mask[[share.index[t] for t in moving]] = True
        got = share.rates(mask)
        want = _reference_rates({t: tasks[t] for t in moving}, caps.__getitem__)
        for t in tasks:
            if t in want:
                assert got[share.index[t]] == pytest.approx(want[t], rel=1e-9), t
            else:
                assert got[share.index[t]] == 0.0, t  # not moving: no rate


def test_run_moves_bytes_at_the_fair_rate_with_limits_overheads_rounds_and_heartbeats():
    cap = {"l": 10.0}.__getitem__
    one = {"t": (100.0, {"l": 1.0}, "n1")}
    assert fairshare.run(one, cap)[0] == pytest.approx(10.0)
    assert fairshare.run(one, cap, overhead_s=0.5)[0] == pytest.approx(10.5)
    two = {"t": (100.0, {"l": 1.0}, "n1"), "u": (100.0, {"l": 1.0}, "n1")}
    assert fairshare.run(two, cap)[0] == pytest.approx(20.0)  # shared: 5 B/s each
    end, spans, busy = fairshare.run(two, cap, limit=1)  # one at a time on n1
    assert end == pytest.approx(20.0) and spans["u"] == pytest.approx((10.0, 20.0))
    assert busy["l"] == pytest.approx(200.0)
    end, spans, _ = fairshare.run(two, cap, start_times={"t": 0.0, "u": 15.0})
    assert end == pytest.approx(25.0) and spans["t"] == pytest.approx((0.0, 10.0))
    # heartbeats every 3 s from 1 s: n1 takes t at 1; u (weight 1, limit 1) only at the first
    # heartbeat after t ends at 11: 13
    end, spans, _ = fairshare.run(two, cap, limit=1, heartbeat_s=3.0, phases={"n1": 1.0})
    assert spans["t"] == pytest.approx((1.0, 11.0)) and spans["u"] == pytest.approx((13.0, 23.0))
    # at a heartbeat a DataNode takes up to max-streams less its weighted xmits in progress:
    # max-streams 4, six tasks of 5 s; weight 1: four at 0, none at 3 (4 running), two at 6;
    # weight 0.5: four at 0, two at 3 (4 - ceil(4 x 0.5))
    six = {i: (50.0, {("l", i): 1.0}, "n1") for i in range(6)}
    for weight, later in ((1.0, 6.0), (0.5, 3.0)):
        _, spans, _ = fairshare.run(six, lambda r: 10.0, limit=4, heartbeat_s=3.0,
                                    weight=weight)
        assert sorted(s for s, _ in spans.values()) == pytest.approx([0.0] * 4 + [later] * 2)


def test_paths_cross_uplinks_only_between_racks():
    c = network.Cluster(3, 4, 100.0, oversubscription=4)
    assert c.uplink_Bps == pytest.approx(100.0)
    a, b, z = "r0-n0", "r0-n1", "r2-n3"
    assert c.path(a, b) == [("out", a), ("in", b)]
    assert c.path(a, z) == [("out", a), ("up", 0), ("down", 2), ("in", z)]
    assert c.path(a, None) == [("out", a), ("up", 0)]  # to the switch on the spine
    assert c.path(a, ("tor", 0)) == [("out", a)]       # to its own rack's switch
    assert c.path(("tor", 0), ("tor", 2)) == [("up", 0), ("down", 2)]


def test_a_racks_other_hosts_widen_its_uplink_as_the_testbeds_client_does():
    # the testbed's first rack also holds the client host, and its uplink is sized for it
    c = network.Cluster(3, 4, 100.0, oversubscription=4, other_hosts={0: 1})
    assert c.capacity(("up", 0)) == pytest.approx(125.0)
    assert c.capacity(("down", 0)) == pytest.approx(125.0)
    assert c.capacity(("up", 1)) == pytest.approx(100.0)
    assert c.capacity(("down", 2)) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="racks are 0 to 2"):
        network.Cluster(3, 4, 100.0, other_hosts={3: 1})


def test_groups_placed_around_the_targets_a_run_logged():
    # RS(6,3) on 3 racks of 5: 3 units a rack; the lost DataNode's rack keeps 2 survivors,
    # the fewest, so the NameNode's rule puts every target in it
    c = network.Cluster(3, 5, 100.0)
    victim, target = "r1-n0", "r1-n4"
    rec = workload.Recovery(c, 6, 3, 50, seed=2, victim=victim, targets=[target] * 50)
    for g in rec.groups:
        assert g.units[0] == victim and len(set(g.units)) == 9
        assert g.target == target and target not in g.units
        alive = collections.Counter(c.rack(u) for u in g.units[1:])
        assert alive[c.rack(target)] == min(alive[r] for r in range(3))
    # a target the rule never allows (another rack: a run's NameNode passed over the rule's
    # DataNode) still gets groups it holds none of
    odd = workload.Recovery(c, 6, 3, 20, seed=2, victim=victim, targets=["r2-n0"] * 20)
    assert all(g.target == "r2-n0" and "r2-n0" not in g.units for g in odd.groups)
    # fewer targets than groups: the rest drawn
    few = workload.Recovery(c, 6, 3, 5, seed=2, victim=victim, targets=[target])
    assert few.groups[0].target == target and all(g.target not in g.units for g in few.groups)
    with pytest.raises(ValueError, match="lost DataNode"):
        workload.Recovery(c, 6, 3, 1, victim=victim, targets=[victim])


def test_groups_are_placed_as_hadoop_places_them():
    # RS(6,3) on 4 racks: 3, 2, 2, 2 a rack; the lost unit's rack holds 3 with chance 3/9
    c = network.Cluster(4, 5, 100.0)
    rec = workload.Recovery(c, 6, 3, 3000, seed=3)
    full = 0
    for g in rec.groups:
        assert g.units[0] == rec.victim and len(set(g.units)) == 9
        per_rack = sorted(sum(1 for u in g.units if c.rack(u) == r) for r in range(4))
        assert per_rack == [2, 2, 2, 3], per_rack
        full += sum(1 for u in g.units if c.rack(u) == c.rack(rec.victim)) == 3
        # the target holds none and is in a rack holding the fewest survivors
        assert g.target not in g.units
        alive = collections.Counter(c.rack(u) for u in g.units[1:])
        assert alive[c.rack(g.target)] == min(alive[r] for r in range(4))
    assert full / len(rec.groups) == pytest.approx(1 / 3, abs=0.03)


def test_the_replication_anchor_crosses_racks_a_third_of_the_time():
    c = network.Cluster(3, 4, 100.0)
    rec = workload.Recovery(c, 1, 0, 3000, seed=6, replicated=True)
    cross = workload.Recovery.cross_rack_per_byte(rec.tasks("replication", 1))
    assert cross == pytest.approx(1 / 3, abs=0.03)
    with pytest.raises(ValueError):
        rec.tasks("native", 1)


def test_replicas_written_from_the_first_rack_lose_what_the_fullest_datanode_held():
    # the racks benchmark's layout: the client in the first rack, the DataNode holding most lost
    c = network.Cluster(4, 3, 100.0)
    for seed in range(1, 6):
        rec = workload.Recovery(c, 1, 0, 20, seed=seed, replicated=True, written=36)
        assert len(rec.groups) == 20
        # 3 DataNodes share every first replica, 9 the pairs: the fullest is in the first
        # rack, its replicas alone there, both survivors in another rack, and every copy
        # leaves that rack (BlockPlacementPolicyDefault: a remote rack when they share one)
        assert c.rack(rec.victim) == 0
        assert all(c.rack(g.order[0]) == c.rack(g.order[1]) != 0 for g in rec.groups)
        assert workload.Recovery.cross_rack_per_byte(rec.tasks("replication", 1)) == 1.0
    elsewhere = [workload.Recovery(network.Cluster(3, 6, 100.0), 1, 0, 20, seed=seed,
                                   replicated=True, written=36) for seed in range(1, 21)]
    elsewhere = [r for r in elsewhere if r.cluster.rack(r.victim) != 0]
    assert elsewhere, "with 6 DataNodes a rack the fullest is also outside the first rack"
    for rec in elsewhere:  # one of a pair: survivors in two racks, the copy beside its source
        assert workload.Recovery.cross_rack_per_byte(rec.tasks("replication", 1)) == 0.0
    # a run's victim outside the writer's rack held one of each pair: its copies stay home
    rec = workload.Recovery(c, 1, 0, 20, seed=1, replicated=True, written=36, victim_rack=2)
    assert c.rack(rec.victim) == 2
    assert workload.Recovery.cross_rack_per_byte(rec.tasks("replication", 1)) == 0.0
    with pytest.raises(ValueError):
        workload.Recovery(c, 3, 2, 1, written=5)
    with pytest.raises(ValueError, match="3 DataNodes"):
        workload.Recovery(network.Cluster(2, 2, 100.0), 1, 0, 1, replicated=True, written=4)


def test_cross_rack_bytes_by_route_on_three_racks():
    c = network.Cluster(3, 4, 100.0)
    rec = workload.Recovery(c, 6, 3, 600, seed=5)
    cross = {r: workload.Recovery.cross_rack_per_byte(rec.tasks(r, 1 << 20))
             for r in workload.ROUTES if r != "replication"}
    # aggregation at each rack: at most one stream out of each of the two other racks
    assert 1.0 <= cross["switch-racks"] <= 2.0
    assert 1.0 <= cross["inec-chain"] <= 2.0
    # the switch on the spine: every one of the 6 streams goes up
    assert cross["switch"] == pytest.approx(6.0)
    # native: 6 of the 8 survivors, 2 or 3 of which share the target's rack: about 4.5
    assert 4.2 <= cross["native"] <= 4.8
    assert cross["inec-chain-flat"] > 3.5


def test_aggregation_at_each_rack_beats_native_at_1_1_and_1_4():
    # 3 racks of 4 at 100 B/s; uplinks 400 B/s (1:1) or 100 B/s (1:4); no CPU cost. At 1:1
    # native is held by the target's link (6 streams in), at 1:4 by the uplinks (about 4.5
    # streams cross a task's); aggregation sends one stream in, and one out of each other rack
    times = {}
    for over in (1, 4):
        c = network.Cluster(3, 4, 100.0, oversubscription=over)
        rec = workload.Recovery(c, 6, 3, 24, seed=7)
        for route in ("native", "switch-racks", "inec-chain"):
            times[route, over] = fairshare.run(rec.tasks(route, 1000), c.capacity)[0]
    for over in (1, 4):
        assert times["native", over] >= 2 * times["switch-racks", over], times
        assert times["native", over] >= 2 * times["inec-chain", over], times
        assert times["native", 4] > times["native", 1]


def test_cpu_costs_bind_where_the_network_does_not():
    c = network.Cluster(3, 4, 1e9, cores=1)
    end_net, _, util_net = cli.recover(c, "rs63", "native", 6, 1 << 30, cli.Hadoop(),
                                       cpu_profile=None)
    end_cpu, _, util_cpu = cli.recover(c, "rs63", "native", 6, 1 << 30, cli.Hadoop(),
                                       cpu_profile="1gbit")
    assert end_cpu > 5 * end_net
    assert max(util_cpu, key=util_cpu.get) == "cpu"
    assert "cpu" not in util_net


def test_validate_reads_the_racks_benchmarks_json(tmp_path):
    run = {"racks": 3, "oversubscription": 4.0, "code": "rs63", "route": "native",
           "blocks": 6, "window_s": 7.4, "cross_rack_per_byte": 4.58}
    copies = dict(run, racks=4, route="replication", blocks=20, window_s=4.74,
                  cross_rack_per_byte=1.16, victims=["dn05"])
    path = tmp_path / "racks.json"
    path.write_text(json.dumps({"command": "bin/netec-bench racks", "link": "100mbit",
                                "datanodes": 12, "block_mb": 4, "cores": 2, "groups": 6,
                                "runs": [run, copies]}))
    out = io.StringIO()
    worst = cli.validate(str(path), out=out)
    text = out.getvalue()
    assert "| 3 | 1:4 | rs63 | native | 1 | 7.40 |" in text, text
    # 36 blocks written from the first rack: its DataNode holding most lost, every copy
    # crossing racks
    assert "| 4 | 1:4 | rs63 | replication | 1 | 4.74 |" in text and "| 1.16 | 1.00 |" in text, text
    assert worst >= 0 and "largest error" in text
    # CPU per byte: the racks testbed's by default, the flat testbed's when asked
    assert "the racks testbed's CPU per rebuilt byte" in text, text
    flat = io.StringIO()
    cli.validate(str(path), out=flat, cpu="100mbit")
    assert "the flat testbed's CPU per byte at 100mbit" in flat.getvalue()
    # and uses it: a CPU-bound run (RS(10,4) through the switch by rack, 2 cores, 1 Gbit/s)
    # is predicted from the racks testbed's 688 s a GiB, far above the flat testbed's
    bound = dict(run, code="rs104", route="switch-racks", blocks=12, window_s=10.0)
    path.write_text(json.dumps({"command": "x", "link": "1gbit", "datanodes": 18,
                                "block_mb": 4, "cores": 2, "groups": 6, "runs": [bound]}))
    predicted = {}
    for cpu in ("racks", "1gbit"):
        text = io.StringIO()
        cli.validate(str(path), out=text, cpu=cpu)
        row = [l for l in text.getvalue().splitlines() if l.startswith("| 3 |")][0]
        predicted[cpu] = float(row.split("|")[7])
    assert predicted["racks"] > 2 * predicted["1gbit"], predicted
    with pytest.raises(ValueError, match="fast"):
        cli._bits("fast")
    assert cli._bits("100mbit") == 1e8 and cli._bits("10mbps") == 8e7


def test_validate_replays_a_runs_targets_and_averages_a_routes_runs(tmp_path):
    # the NameNode gave all six RS(10,4) tasks to one DataNode (dn10): its link takes in 60
    # streams, so the run is far longer than the model's own draw of targets would say
    tasks = [{"at_ms": 0, "dn": "dn10", "route": "native", "ms": 9000, "bytes": 4 << 20,
              "others": ""} for _ in range(6)]
    run = {"racks": 3, "oversubscription": 4.0, "code": "rs104", "route": "native",
           "blocks": 6, "window_s": 30.0, "cross_rack_per_byte": 7.95, "victims": ["dn01"],
           "task_log": tasks}
    res = {"command": "x", "link": "50mbit", "datanodes": 18, "block_mb": 4, "cores": 2,
           "groups": 6, "runs": [run]}
    path = tmp_path / "racks.json"
    path.write_text(json.dumps(res))
    predicted = {}
    for targets in ("measured", "drawn"):
        out = io.StringIO()
        cli.validate(str(path), out=out, targets=targets)
        row = [l for l in out.getvalue().splitlines() if l.startswith("| 3 |")][0]
        predicted[targets] = float(row.split("|")[7])
    # 6 x 10 x 4 MiB into one 50 Mbit/s link: 40 s and more
    assert predicted["measured"] > 40.0 > predicted["drawn"], predicted
    # two runs of a route: one row, their mean measured against the model's mean over both
    res["runs"] = [run, dict(run, window_s=20.0, cross_rack_per_byte=8.05)]
    path.write_text(json.dumps(res))
    out = io.StringIO()
    cli.validate(str(path), out=out)
    rows = [l for l in out.getvalue().splitlines() if l.startswith("| 3 |")]
    assert len(rows) == 1 and "| rs104 | native | 2 | 25.00 |" in rows[0], rows
    assert "| 8.00 |" in rows[0], rows


def test_the_racks_cpu_profile_charges_a_routes_whole_cost_to_one_pool():
    """RACKS_CPU is the whole testbed's CPU a rebuilt byte (every daemon on one pool of
    cores), by route and k: validate's CPU-bound rows take it whole."""
    for route in workload.ROUTES:
        for k in (3, 6, 10):
            costs = workload.cpu_costs("racks", route, k)
            assert list(costs) == ["target"]
            assert costs["target"] == workload.racks_cpu(route, k) / workload.GIB
    # as measured at k = 3, 6 and 10; linear between; the nearest measured k beyond them and
    # for a route not measured at some k
    assert workload.racks_cpu("switch", 6) == workload.racks_cpu("switch", 3) == 321.0
    assert workload.racks_cpu("switch", 10) == 829.0
    assert workload.racks_cpu("switch", 8) == (321.0 + 829.0) / 2
    assert workload.racks_cpu("switch", 2) == 321.0 and workload.racks_cpu("switch", 12) == 829.0
    assert workload.racks_cpu("replication", 10) == workload.racks_cpu("replication", 3)
    assert workload.racks_cpu("inec-chain-flat", 10) == pytest.approx(235.0 * 441.0 / 204.0)
    with pytest.raises(ValueError, match="route teleport"):
        workload.racks_cpu("teleport", 6)
    c = network.Cluster(3, 4, 1e9 / 8, oversubscription=1, cpu_pool=2)
    # two cores at 451 s a GiB take 0.9 s a 4 MiB block: on 1 Gbit/s links the CPU binds
    end, _, util = cli.recover(c, "rs63", "switch-racks", 24, 4 << 20, cli.TESTBED_HADOOP,
                               cpu_profile="racks", switch_cpu=True)
    assert max(util, key=util.get) == "cpu", util
    assert end >= 24 * 4 / 1024 * 451.0 / 2
