"""bin/netec-sim: whole-node recovery of an HDFS cluster with racks, per route, predicted by a
flow-level model (netec_sim: max-min fair sharing of host links, uplinks and CPU).

  predict   one cluster, every route: time to rebuild a lost DataNode's blocks, cross-rack
            bytes per rebuilt byte
  validate  the model against bin/netec-bench racks' measurements (its JSON): the testbed's
            layout, every host a process sharing this machine's cores, side by side
  table     the table docs/ carries: 1,000 DataNodes in 25 racks, 25 Gbit/s hosts, 1:3
            uplinks, RS(6,3) and RS(10,4), per route, on the network alone and with the
            testbed's CPU per byte

What it models, and what not: links and uplinks shared max-min fairly (TCP's long-run share);
a task's streams moving in step (a stripe completes when every stream delivered it); CPU per
rebuilt byte per role as the testbed measured it (Java daemons on a shared VM: far more than a
cluster's, so the network-alone figures are given too); the NameNode giving out tasks in
rounds and each DataNode taking them at its heartbeats within max-streams (class Hadoop).
Not: slow start, queueing delay, disks, the dead-node detection before the first round,
concurrent client load, whole-rack failures.
"""

import argparse
import json
import os
import random
import re
import sys

from . import fairshare, network, workload

CODES = {"rs32": (3, 2), "rs63": (6, 3), "rs104": (10, 4)}


def recover(cluster, code, route, lost, block_bytes, hadoop, cpu_profile=None, seed=1,
            switch_cpu=False, overhead_s=0.05, written=None, victim_rack=None, victim=None,
            targets=None):
    """One whole-node recovery: (seconds from the first task given out to the last one's end,
    cross-rack bytes per rebuilt byte, {resource kind: utilization}). HADOOP: the NameNode's
    and DataNodes' settings (Hadoop below); WRITTEN, VICTIM_RACK: workload.Recovery's, for
    replication; VICTIM, TARGETS: its, for erasure-coded groups."""
    k, m = CODES[code]
    replicated = route == "replication"
    rec = workload.Recovery(cluster, k, m, lost, seed=seed, replicated=replicated,
                            written=written if replicated else None,
                            victim_rack=victim_rack if replicated else None,
                            victim=None if replicated else victim,
                            targets=None if replicated else targets)
    tasks = rec.tasks(route, block_bytes, cpu_profile=cpu_profile, switch_cpu=switch_cpu)
    per_round = max(1, int(hadoop.multiplier * (len(cluster.nodes) - 1)))  # live DataNodes
    starts = {t: (i // per_round) * hadoop.interval_s for i, t in enumerate(sorted(tasks))}
    rng = random.Random(seed)
    phases = {n: rng.uniform(0, hadoop.heartbeat_s) for n in cluster.nodes}
    # an EC task weighs max(k, targets) x the xmits weight; a replication one, 1
    weight = 1.0 if route == "replication" else max(k, 1) * hadoop.xmits_weight
    end, _, busy = fairshare.run(tasks, cluster.capacity, start_times=starts,
                                 overhead_s=overhead_s, limit=hadoop.max_streams,
                                 heartbeat_s=hadoop.heartbeat_s, weight=weight, phases=phases)
    return (end, workload.Recovery.cross_rack_per_byte(tasks),
            fairshare.utilization(busy, cluster.capacity, end))


class Hadoop:
    """What paces a recovery in Hadoop 3.4: the NameNode's rounds (every interval_s, at most
    multiplier x live DataNodes blocks a round: dfs.namenode.redundancy.interval.seconds,
    dfs.namenode.replication.work.multiplier.per.iteration), and each DataNode taking tasks at
    its heartbeats (dfs.heartbeat.interval) while its xmits in progress are under max_streams
    (dfs.namenode.replication.max-streams; an EC task weighs max(k, targets) x
    dfs.datanode.ec.reconstruction.xmits.weight)."""

    def __init__(self, interval_s=3.0, multiplier=2.0, heartbeat_s=3.0, max_streams=2,
                 xmits_weight=0.5):
        self.interval_s = interval_s
        self.multiplier = multiplier
        self.heartbeat_s = heartbeat_s
        self.max_streams = max_streams
        self.xmits_weight = xmits_weight


# the testbed's settings (testbed/netec_testbed/cluster.py)
TESTBED_HADOOP = Hadoop(interval_s=1.0, multiplier=8, heartbeat_s=1.0, max_streams=8)


_BOUND_NAMES = {"out": "host links out", "in": "host links in", "up": "uplinks out",
                "down": "uplinks in", "cpu": "CPU"}


def _bound(util):
    """The busiest kind of resource and its use. Uses equal to a millionth (a rack's hosts
    sending what its uplink carries, summed in another order) go to the kind listed first."""
    if not util:
        return "- 0%"
    top = max(util.values())
    order = list(_BOUND_NAMES)
    kind = min((k for k, u in util.items() if u >= top * (1 - 1e-6)),
               key=lambda k: (order.index(k) if k in order else len(order), k))
    return "%s %.0f%%" % (_BOUND_NAMES.get(kind, kind), 100 * util[kind])


def predict(a):
    c = network.Cluster(a.racks, a.per_rack, a.host_gbit * 1e9 / 8, a.oversubscription,
                        cores=a.cores)
    hadoop = Hadoop(a.interval, a.multiplier, a.heartbeat, a.max_streams, a.xmits_weight)
    rows = []
    for code in a.codes.split(","):
        for route in a.routes.split(","):
            for profile in ([None, a.cpu] if a.cpu else [None]):
                end, cross, util = recover(c, code, route, a.lost, a.block_mb << 20, hadoop,
                                           cpu_profile=profile, seed=a.seed,
                                           overhead_s=a.overhead_ms / 1000.0)
                rows.append((code, route, profile, end, cross, util))
    return c, rows


def print_predictions(a, c, rows, out=sys.stdout):
    print("%d DataNodes in %d racks, %g Gbit/s hosts, uplinks %g Gbit/s (1:%g), %d cores a "
          "DataNode; %d lost blocks of %d MiB; the NameNode's rounds every %g s of %g tasks a "
          "live DataNode, heartbeats every %g s, max-streams %d (xmits weight %g); a task's "
          "fixed cost %g ms" % (
              len(c.nodes), c.racks, a.host_gbit, c.uplink_Bps * 8 / 1e9, c.oversubscription,
              a.cores, a.lost, a.block_mb, a.interval, a.multiplier, a.heartbeat,
              a.max_streams, a.xmits_weight, a.overhead_ms), file=out)
    print("", file=out)
    print("| code | route | CPU per byte | recovery s | native / route | cross-rack B/B | "
          "busiest |", file=out)
    print("|---|---|---|---:|---:|---:|---|", file=out)
    for code, route, profile, end, cross, util in rows:
        nat = [e for cd, r, p, e, _, _ in rows if cd == code and r == "native" and p == profile]
        print("| %s | %s | %s | %.1f | %s | %.2f | %s |" % (
            code, route, "testbed's (%s)" % profile if profile else "none (network alone)",
            end, "%.2fx" % (nat[0] / end) if nat and end else "-", cross, _bound(util)),
            file=out)


def _bits(rate):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmg]?)(bit|bps)", rate.strip().lower())
    if not m:
        raise ValueError("link rate '%s': expected e.g. 100mbit, 1gbit" % rate)
    n = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return n * (8 if m.group(3) == "bps" else 1)


def testbed_node(cluster, name):
    """The model's DataNode for the testbed's NAME: the testbed deals DataNodes round its
    racks (dnN in rack (N - 1) % R + 1, the client's rack 1 the model's rack 0)."""
    m = re.fullmatch(r"dn(\d+)", name)
    if not m or not 1 <= int(m.group(1)) <= len(cluster.nodes):
        raise ValueError("DataNode '%s': expected dn1 to dn%d" % (name, len(cluster.nodes)))
    n = int(m.group(1)) - 1
    return cluster.rack_nodes(n % cluster.racks)[n // cluster.racks]


def validate(path, cores=None, out=sys.stdout, cpu="racks", targets="measured"):
    """Predicted against measured, for every run of bin/netec-bench racks' JSON at PATH, with
    CPU per byte as profile CPU has it ("racks": the racks testbed's, workload.RACKS_CPU; a
    link rate: the flat testbed's at that rate). TARGETS "measured": each erasure-coded run's
    lost DataNode and the DataNodes its tasks ran on, as the run logged them (the NameNode's
    draw, an input of the run like its layout; groups placed around them), "drawn": the
    model's own draw. Returns the largest error of the recovery windows."""
    with open(path) as f:
        res = json.load(f)
    cores = cores or res.get("cores") or os.cpu_count() or 2
    where = ("the racks testbed's CPU per rebuilt byte (its 50 Mbit/s run)" if cpu == "racks"
             else "the flat testbed's CPU per byte at %s" % cpu)
    print("bin/netec-bench racks' runs (`%s`) against the model: the testbed's layout, every "
          "daemon sharing %d cores, %s, its Hadoop settings "
          "(a round a second of 8 tasks a live DataNode, 1 s heartbeats, max-streams 8), "
          "replicated blocks written from its first rack and the fullest DataNode of the "
          "victim's rack lost, as the benchmark does; %s; each prediction the mean over 5 "
          "placements (for a route run more than once, over every run's, beside the runs' "
          "mean)" % (res["command"], cores, where,
                     "each erasure-coded run's lost DataNode and tasks' DataNodes as it "
                     "logged them, its groups placed around them" if targets == "measured"
                     else "the lost DataNode and the targets drawn by the model"), file=out)
    print("", file=out)
    print("| racks | oversub. | code | route | runs | measured s | predicted s | error | "
          "measured cross-rack B/B | predicted | busiest (model) |", file=out)
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---|", file=out)
    worst = 0.0
    groups = {}
    for r in res["runs"]:
        if r["route"] in workload.ROUTES and r["blocks"]:
            groups.setdefault((r["racks"], r["oversubscription"], r["code"], r["route"]),
                              []).append(r)
    for (racks, over, code, route), runs in groups.items():
        ends, crosses, utils = [], [], []
        for r in runs:
            e, x, u = _predict_run(res, r, cores, cpu, targets)
            ends += e
            crosses += x
            utils += u
        measured = sum(r["window_s"] for r in runs) / len(runs)
        pred = sum(ends) / len(ends)
        err = (pred - measured) / measured if measured else float("nan")
        worst = max(worst, abs(err))
        print("| %d | 1:%g | %s | %s | %d | %.2f | %.2f | %+.0f%% | %.2f | %.2f | %s |" % (
            racks, over, code, route, len(runs), measured, pred, 100 * err,
            sum(r["cross_rack_per_byte"] for r in runs) / len(runs),
            sum(crosses) / len(crosses), _bound(utils[0])), file=out)
    print("", file=out)
    print("largest error: %.0f%%" % (100 * worst), file=out)
    return worst


def _predict_run(res, r, cores, cpu, targets):
    """The model's (ends, cross-rack bytes per byte, utilizations) over 5 placements for run R
    of the racks benchmark's results RES."""
    host_Bps = _bits(res["link"]) / 8
    # the testbed's client host is in its first rack, and that rack's uplink is sized for it
    # too (the testbed's Testbed.uplink_rate)
    c = network.Cluster(r["racks"], res["datanodes"] // r["racks"], host_Bps,
                        r["oversubscription"], cpu_pool=cores, other_hosts={0: 1})
    # what the benchmark wrote of replicated blocks: groups x k (older JSON: not known)
    written = res["groups"] * CODES[r["code"]][0] if "groups" in res else None
    victims = [testbed_node(c, v) for v in r.get("victims", []) if re.fullmatch(r"dn\d+", v)]
    victim_rack = c.rack(victims[0]) if victims else None
    served = [t for t in r.get("task_log", []) if t["route"] != "none"]
    replay = targets == "measured" and victims and served
    victim = victims[0] if replay else None
    task_targets = [testbed_node(c, t["dn"]) for t in served] if replay else None
    ends, crosses, utils = [], [], []
    for seed in range(1, 6):
        end, cross, util = recover(c, r["code"], r["route"], r["blocks"],
                                   res["block_mb"] << 20, TESTBED_HADOOP, cpu_profile=cpu,
                                   seed=seed, switch_cpu=True, written=written,
                                   victim_rack=victim_rack, victim=victim,
                                   targets=task_targets)
        ends.append(end)
        crosses.append(cross)
        utils.append(util)
    return ends, crosses, utils


def main(argv=None):
    p = argparse.ArgumentParser(prog="netec-sim", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("predict", "table"):
        q = sub.add_parser(name)
        q.add_argument("--racks", type=int, default=25)
        q.add_argument("--per-rack", type=int, default=40, help="DataNodes a rack")
        q.add_argument("--host-gbit", type=float, default=25.0)
        q.add_argument("--oversubscription", type=float, default=3.0)
        q.add_argument("--cores", type=int, default=16, help="cores a DataNode")
        q.add_argument("--cpu", default="1gbit" if name == "table" else None,
                       choices=sorted(workload.TESTBED_CPU),
                       help="also with CPU per byte as the testbed measured it at this link "
                            "rate (every route is also run on the network alone)")
        q.add_argument("--codes", default="rs63,rs104")
        q.add_argument("--routes", default=",".join(r for r in workload.ROUTES
                                                    if r != "replication"))
        q.add_argument("--lost", type=int, default=400, help="blocks the lost DataNode held")
        q.add_argument("--block-mb", type=int, default=256)
        q.add_argument("--interval", type=float, default=3.0,
                       help="seconds between the NameNode's rounds (Hadoop's default 3)")
        q.add_argument("--multiplier", type=float, default=2.0,
                       help="tasks a round per live DataNode (Hadoop's default 2)")
        q.add_argument("--heartbeat", type=float, default=3.0,
                       help="seconds between a DataNode's heartbeats (Hadoop's default 3)")
        q.add_argument("--max-streams", type=int, default=2,
                       help="dfs.namenode.replication.max-streams (Hadoop's default 2)")
        q.add_argument("--xmits-weight", type=float, default=0.5,
                       help="dfs.datanode.ec.reconstruction.xmits.weight (default 0.5)")
        q.add_argument("--overhead-ms", type=float, default=50.0,
                       help="a task's fixed cost before it moves bytes")
        q.add_argument("--seed", type=int, default=1)
    v = sub.add_parser("validate")
    v.add_argument("json", nargs="?", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "docs", "racks-benchmark.json"))
    v.add_argument("--cores", type=int, default=None,
                   help="the testbed machine's cores, shared by every daemon (default: as "
                        "the JSON records, else this machine's)")
    v.add_argument("--cpu", default="racks", choices=workload.CPU_PROFILES,
                   help="CPU per rebuilt byte: racks (the racks testbed's, measured at 50 "
                        "Mbit/s) or the flat testbed's at a link rate")
    v.add_argument("--targets", default="measured", choices=("measured", "drawn"),
                   help="the lost DataNode and each task's DataNode: as the run logged them "
                        "(measured; runs without a task log: drawn) or the model's own draw")
    a = p.parse_args(argv)
    if a.command == "validate":
        worst = validate(a.json, a.cores, cpu=a.cpu, targets=a.targets)
        return 0 if worst <= 0.2 else 1
    c, rows = predict(a)
    print_predictions(a, c, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
