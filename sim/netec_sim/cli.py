"""bin/netec-sim: whole-node recovery of an HDFS cluster with racks, per route, predicted by a
flow-level model (netec_sim: max-min fair sharing of host links, uplinks and CPU).

  predict   one cluster, every route: time to rebuild a lost DataNode's blocks, cross-rack
            bytes per rebuilt byte
  validate  the model against bin/netec-bench racks' measurements (its JSON): the testbed's
            layout, every host a process sharing this machine's cores, side by side
  table     the table docs/ carries: 1,000 DataNodes in 25 racks, 25 Gbit/s hosts, 1:3
            uplinks, RS(6,3) and RS(10,4), per route

What it models, and what not: links and uplinks shared max-min fairly (TCP's long-run share);
a task's streams moving in step (a stripe completes when every stream delivered it); CPU per
rebuilt byte per role as the testbed measured it, a task's target work on one thread; the
NameNode giving out tasks in rounds (dfs.namenode.redundancy.interval.seconds, and
work.multiplier.per.iteration x live DataNodes a round) with at most max-streams running a
target. Not: slow start, queueing delay, disks, the NameNode's dead-node detection (added as a
constant), concurrent client load.
"""

import argparse
import json
import os
import sys

from . import fairshare, network, workload

CODES = {"rs32": (3, 2), "rs63": (6, 3), "rs104": (10, 4)}


def recover(cluster, code, route, lost, block_bytes, interval_s, per_round, limit, overhead_s,
            seed=1, switch_cpu=False):
    """(seconds from the first task given out to the last one's end, cross-rack B/B)."""
    k, m = CODES[code]
    rec = workload.Recovery(cluster, k, m, lost, seed=seed,
                            replicated=route == "replication")
    tasks = rec.tasks(route, block_bytes, switch_cpu=switch_cpu)
    starts = {t: (i // per_round) * interval_s for i, t in enumerate(sorted(tasks))}
    end, _ = fairshare.run(tasks, cluster.capacity, start_times=starts,
                           overhead_s=overhead_s, limit=limit)
    return end, workload.Recovery.cross_rack_per_byte(tasks)


def predict(a):
    c = network.Cluster(a.racks, a.per_rack, a.host_gbit * 1e9 / 8, a.oversubscription,
                        cores=a.cores)
    per_round = a.multiplier * len(c.nodes)
    rows = []
    for code in a.codes.split(","):
        for route in a.routes.split(","):
            end, cross = recover(c, code, route, a.lost, a.block_mb << 20, a.interval,
                                 per_round, a.max_streams, a.overhead_ms / 1000.0, a.seed)
            rows.append((code, route, end, cross))
    return c, rows


def print_predictions(a, c, rows, out=sys.stdout):
    print("%d DataNodes in %d racks, %g Gbit/s hosts, uplinks %g Gbit/s (1:%g), %d cores a "
          "DataNode; %d lost blocks of %d MiB; the NameNode gives out %d tasks every %g s, at "
          "most %d running a target" % (
              len(c.nodes), c.racks, a.host_gbit, c.uplink_Bps * 8 / 1e9, c.oversubscription,
              a.cores, a.lost, a.block_mb, a.multiplier * len(c.nodes), a.interval,
              a.max_streams), file=out)
    print("", file=out)
    print("| code | route | recovery s | vs native | cross-rack B/B |", file=out)
    print("|---|---|---:|---:|---:|", file=out)
    for code, route, end, cross in rows:
        nat = [e for cd, r, e, _ in rows if cd == code and r == "native"]
        print("| %s | %s | %.1f | %s | %.2f |" % (
            code, route, end, "%.2fx" % (nat[0] / end) if nat and end else "-", cross),
            file=out)


def validate(path, cores, out=sys.stdout):
    """Predicted against measured, for every run of bin/netec-bench racks' JSON at PATH."""
    with open(path) as f:
        res = json.load(f)
    bits = {"k": 1e3, "m": 1e6, "g": 1e9}
    link = res["link"].lower().rstrip("bit")
    host_Bps = float(link[:-1]) * bits[link[-1]] / 8 if link[-1] in bits else float(link) / 8
    print("bin/netec-bench racks' runs (%s) against the model: the testbed's layout, every "
          "daemon sharing %d cores, the testbed's NameNode settings (a round a second, 8 "
          "tasks a DataNode a round, 8 running a target)" % (res["command"], cores), file=out)
    print("", file=out)
    print("| racks | oversub. | code | route | measured window s | predicted s | error | "
          "measured cross-rack B/B | predicted |", file=out)
    print("|---|---|---|---|---:|---:|---:|---:|---:|", file=out)
    worst = 0.0
    for r in res["runs"]:
        if r["route"] not in workload.ROUTES or not r["blocks"]:
            continue
        c = network.Cluster(r["racks"], res["datanodes"] // r["racks"], host_Bps,
                            r["oversubscription"], cpu_pool=cores)
        ends = []
        crosses = []
        for seed in range(1, 6):  # placement and targets drawn 5 ways, averaged
            end, cross = recover(c, r["code"], r["route"], r["blocks"],
                                 res["block_mb"] << 20, 1.0, 8 * len(c.nodes), 8, 0.05,
                                 seed=seed, switch_cpu=True)
            ends.append(end)
            crosses.append(cross)
        pred = sum(ends) / len(ends)
        cross = sum(crosses) / len(crosses)
        err = (pred - r["window_s"]) / r["window_s"] if r["window_s"] else float("nan")
        worst = max(worst, abs(err))
        print("| %d | 1:%g | %s | %s | %.2f | %.2f | %+.0f%% | %.2f | %.2f |" % (
            r["racks"], r["oversubscription"], r["code"], r["route"], r["window_s"], pred,
            100 * err, r["cross_rack_per_byte"], cross), file=out)
    print("", file=out)
    print("largest error: %.0f%%" % (100 * worst), file=out)
    return worst


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
        q.add_argument("--codes", default="rs63,rs104")
        q.add_argument("--routes", default=",".join(workload.ROUTES))
        q.add_argument("--lost", type=int, default=400, help="blocks the lost DataNode held")
        q.add_argument("--block-mb", type=int, default=256)
        q.add_argument("--interval", type=float, default=3.0,
                       help="seconds between the NameNode's rounds (Hadoop's default 3)")
        q.add_argument("--multiplier", type=float, default=2.0,
                       help="tasks a round per live DataNode (Hadoop's default 2)")
        q.add_argument("--max-streams", type=int, default=2,
                       help="tasks running a target at once (Hadoop's default 2)")
        q.add_argument("--overhead-ms", type=float, default=50.0,
                       help="a task's fixed cost before it moves bytes")
        q.add_argument("--seed", type=int, default=1)
    v = sub.add_parser("validate")
    v.add_argument("json", nargs="?", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "docs", "racks-benchmark.json"))
    v.add_argument("--cores", type=int, default=os.cpu_count() or 2,
                   help="the testbed machine's cores, shared by every daemon")
    a = p.parse_args(argv)
    if a.command == "validate":
        worst = validate(a.json, a.cores)
        return 0 if worst <= 0.2 else 1
    if a.command == "table":
        a.multiplier = int(a.multiplier)
    c, rows = predict(a)
    print_predictions(a, c, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
