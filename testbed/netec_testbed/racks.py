"""bin/netec-bench racks: whole-node recovery on a leaf-spine testbed, per route, side by side.

For each rack layout (--racks R, each --oversubscription X: uplinks at the rack's host links
together over X) a testbed with racks comes up (bin/netec-testbed up --racks R ...); for each
code and route the DataNodes are restarted with that route's settings, files are written
over unshaped links, every link and uplink is then shaped, the DataNode holding the most
internal blocks is killed with kill -9 (every group it held is rebuilt), and the run
measures:
  - time to full redundancy: from the kill to the last lost block stored again (the
    NameNode's 14 s to declare the DataNode dead included), and the rebuild rate over the
    routers' task window;
  - cross-rack bytes per rebuilt byte: what left the racks over their uplinks (the spine's
    ends of the uplink veths) between the DataNode's death and the end, per rebuilt byte;
  - cores busy (every daemon's CPU seconds over the window): near this machine's core count
    the run was CPU-bound, whatever the links allowed;
  - every rebuilt block compared byte for byte with the dead DataNode's copy.
Routes: native (Hadoop's reconstruction), switch (the software switch on the spine: every
survivor stream crosses its rack's uplink once), switch-racks (a software switch in every
rack, netec.switch.racks: the task runs on the rebuilding node's rack's switch, and every
other rack holding two or more survivors sends one partial sum over its uplink), inec-chain (the INEC chain planned by rack,
netec.inec.racks=true: each rack's partial result leaves it once), inec-chain-flat (the
chain in the NameNode's order, netec.inec.racks=false), and 3-way replication as the anchor.
Writes docs/racks-benchmark.md (tables, command line, machine), its JSON and a PNG plot.
"""

import argparse
import os
import signal
import sys
import time

from . import bench, scenario
from .cluster import Config, Testbed
from .hadoop import REPO
from .net import rate_bits

ROUTES = {  # name -> (route order, INEC scheme, netec.inec.racks, replicated?, switch by rack?)
    "native": ("native", "ecpipe", "true", False, False),
    "switch": ("switch,native", "ecpipe", "true", False, False),
    "switch-racks": ("switch,native", "ecpipe", "true", False, True),
    "inec-chain": ("inec,native", "ecpipe", "true", False, False),
    "inec-chain-flat": ("inec,native", "ecpipe", "false", False, False),
    "replication": ("native", "ecpipe", "true", True, False),
}
say = bench.say


def run_one(tb, code, route, link, groups, seed):
    policy, k = bench.CODES[code]
    replicated = ROUTES[route][3]
    tb.shape(None)
    files = scenario.Files(tb, "/racks/%s-%s-%d" % (code, route, seed),
                           None if replicated else policy, 1, groups * k * tb.cfg.block_size,
                           seed=seed).write()
    tb.shape(link)
    o = scenario.lose_and_rebuild(tb, files, replicated=replicated)
    files.remove()
    tb.shape(None)
    return o


def summarize(o, tb):
    roles = sum(v for h, v in o.cpu.items())
    return {"victims": o.victims, "blocks": len(o.lost_blocks), "tasks": len(o.tasks),
            "served_by": o.served_by, "bytes": o.bytes,
            "redundancy_s": round(o.wall_s, 2), "window_s": round(o.window_s, 3),
            "rate_MBps": round(o.rate / 1e6, 2),
            "cross_rack_per_byte": round(o.cross_rack_per_byte, 3),
            "uplinks": {str(r): v for r, v in sorted(o.uplinks.items())},
            "cores_busy": round(roles / o.window_s, 2) if o.bytes else 0,
            "equal": o.all_equal,
            # each routed task (start in ms from the first, its route, ms, bytes): what a
            # long window was made of
            "task_log": _task_log(o.tasks)}


def _task_log(tasks):
    """The routed tasks by start; re-replication's (from the DataNodes' logs: no start, no
    route's record) have none."""
    tasks = [t for t in tasks if "start" in t]
    if not tasks:
        return []
    first = min(t["start"] for t in tasks)
    return [{"at_ms": t["start"] - first, "dn": t["dn"], "route": t["route"], "ms": t["ms"],
             "bytes": t["bytes"], "others": t["others"][:200]}
            for t in sorted(tasks, key=lambda t: t["start"])]


def main(argv=None):
    p = argparse.ArgumentParser(prog="netec-bench racks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--racks", default="3", help="rack counts, comma-separated (e.g. 3,4)")
    p.add_argument("--oversubscription", default="1,4",
                   help="uplink oversubscriptions, comma-separated (1: an uplink as fast as "
                        "its rack's host links together)")
    p.add_argument("--codes", default="rs63")
    p.add_argument("--routes",
                   default="native,switch,switch-racks,inec-chain,inec-chain-flat,replication")
    p.add_argument("--link", default="100mbit", help="every host link, both ways")
    p.add_argument("--datanodes", type=int, default=12,
                   help="DataNodes (RS(10,4)'s 14 units need 15 or more on 3 racks)")
    p.add_argument("--block-mb", type=int, default=4)
    p.add_argument("--groups", type=int, default=8, help="block groups written per run")
    p.add_argument("--warmup", type=int, default=1, metavar="N",
                   help="untimed rounds per route before its measured one (the JIT)")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="measured runs per route, each on newly written files: the NameNode "
                        "places them and picks the targets anew (bin/netec-sim validate "
                        "compares their mean with the model's)")
    p.add_argument("--out", default=os.path.join(REPO, "docs", "racks-benchmark.md"))
    a = p.parse_args(argv)
    cmdline = "bin/netec-bench racks " + " ".join(argv if argv is not None else sys.argv[1:])
    codes, routes = a.codes.split(","), a.routes.split(",")
    for c in codes:
        if c not in bench.CODES:
            p.error("--codes: %s is not one of %s" % (c, ",".join(bench.CODES)))
    for r in routes:
        if r not in ROUTES:
            p.error("--routes: %s is not one of %s" % (r, ",".join(ROUTES)))
    if a.repeat < 1 or a.warmup < 0:
        p.error("--repeat must be at least 1 and --warmup at least 0")
    layouts = [(int(r), float(x)) for r in a.racks.split(",")
               for x in a.oversubscription.split(",")]
    signal.signal(signal.SIGTERM, bench._interrupted)
    results = {"runs": [], "command": cmdline, "link": a.link, "groups": a.groups,
               "cores": os.cpu_count(),
               "block_mb": a.block_mb, "datanodes": a.datanodes, "warmup": a.warmup,
               "repeat": a.repeat}
    started = time.time()
    seed = 300
    for racks, over in layouts:
        tb = Testbed(Config(prefix="nrk", datanodes=a.datanodes, racks=racks,
                            oversubscription=over, link=a.link, block_size=a.block_mb << 20))
        try:
            tb.up(progress=say)
            uplink = tb.uplink_rate(2)  # a rack without the client host; cfg.link is set now
            say("%d racks, 1:%g: uplinks %s" % (racks, over, ", ".join(
                "%s %s" % (r, tb.uplink_rate(r)) for r in tb.fabric.racks())))
            for code in codes:
                for route in routes:
                    order, scheme, by_rack, _, switch_by_rack = ROUTES[route]
                    tb.cfg.hdfs["netec.inec.racks"] = by_rack
                    tb.cfg.hdfs["netec.switch.racks"] = (tb.switch_racks_key()
                                                         if switch_by_rack else "")
                    say("%s, route %s: netec.route.order=%s, netec.inec.racks=%s" % (
                        code, route, order, by_rack))
                    tb.restart_datanodes(route_order=order, inec_scheme=scheme, revive=True)
                    for n in range(a.warmup + a.repeat):
                        seed += 1
                        o = run_one(tb, code, route, a.link, a.groups, seed)
                        for v in o.victims:
                            tb.revive(v)
                        if n < a.warmup:
                            say("  warm-up (not measured): %s" % scenario.describe(o))
                            continue
                        s = summarize(o, tb)
                        s.update(racks=racks, oversubscription=over, code=code, route=route,
                                 uplink=uplink)
                        results["runs"].append(s)
                        say("  %s; %.2f s to full redundancy, %.2f cross-rack bytes per "
                            "rebuilt byte" % (scenario.describe(o), o.wall_s,
                                              o.cross_rack_per_byte))
        finally:
            tb.down()
    results["seconds"] = round(time.time() - started)
    write_report(results, a.out)
    say("wrote %s (and its PNG and JSON) in %d s" % (a.out, results["seconds"]))
    return 0 if all(r["equal"] for r in results["runs"]) else 1


def write_report(res, out):
    plots = bench.json_and_plots(res, out, plot)
    L = ["# Racks benchmark: whole-node recovery on a leaf-spine", "",
         "Printed by `%s` in one run (%d s) on %s. Hadoop 3.4.3 daemons on the testbed with "
         "racks (bin/netec-testbed up --racks R --oversubscription X): %d DataNodes dealt "
         "round the racks, host links %s both ways, each rack's uplink its host links "
         "together over X, both ways; the NameNode places groups rack-fault-tolerantly from "
         "the topology script. Per run: %d block groups of %d MiB internal blocks written, the "
         "DataNode holding most internal blocks killed with kill -9, every block it held "
         "rebuilt (after %d untimed warm-up run(s) per route)." % (
             res["command"], res["seconds"], bench.machine(), res["datanodes"], res["link"],
             res["groups"], res["block_mb"], res["warmup"]), "",
         "to full redundancy: from the kill to the last lost block stored again (the "
         "NameNode's 14 s to declare the DataNode dead included); window: first task start to "
         "last task end (the routers' records); cross-rack B/B: bytes that left a rack over "
         "its uplink per rebuilt byte; cores busy: every daemon's CPU seconds over the window "
         "(near %d, this machine's cores, the run was CPU-bound)." % os.cpu_count(), "",
         "| racks | oversub. | uplink | code | route | blocks | tasks | served by | to full "
         "redundancy s | window s | rate MB/s | cross-rack B/B | cores busy | equal |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["runs"]:
        L.append("| %d | 1:%g | %s | %s | %s | %d | %d | %s | %.1f | %.2f | %.1f | %.2f | %s | "
                 "%s |" % (r["racks"], r["oversubscription"], _mbit(r["uplink"]), r["code"],
                           r["route"], r["blocks"], r["tasks"], ", ".join(
                               "%s %d" % kv for kv in sorted(r["served_by"].items())),
                           r["redundancy_s"], r["window_s"], r["rate_MBps"],
                           r["cross_rack_per_byte"], r["cores_busy"],
                           "yes" if r["equal"] else "NO"))
    means = route_means(res["runs"])
    L += ["", "Against native in the same layout (rate over the window; cross-rack bytes; the "
          "mean of a route's runs where it ran more than once):", "",
          "| racks | oversub. | code | route | runs | rate / native | cross-rack B/B "
          "(native's) |", "|---|---|---|---|---|---|---|"]
    for (racks, over, code, route), m in means.items():
        nat = means.get((racks, over, code, "native"))
        if nat and route != "native" and nat["rate_MBps"]:
            L.append("| %d | 1:%g | %s | %s | %d | %.2fx | %.2f (%.2f) |" % (
                racks, over, code, route, m["runs"], m["rate_MBps"] / nat["rate_MBps"],
                m["cross_rack_per_byte"], nat["cross_rack_per_byte"]))
    L += [""] + ["![%s](%s)" % (os.path.basename(p), os.path.basename(p)) for p in plots]
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")


def route_means(runs):
    """{(racks, oversubscription, code, route): the mean window_s, rate_MBps and
    cross_rack_per_byte of its RUNS, and how many}, in the order the runs came."""
    groups = {}
    for r in runs:
        groups.setdefault((r["racks"], r["oversubscription"], r["code"], r["route"]),
                          []).append(r)
    return {key: dict({f: sum(r[f] for r in rs) / len(rs)
                       for f in ("window_s", "rate_MBps", "cross_rack_per_byte")},
                      runs=len(rs))
            for key, rs in groups.items()}


def _mbit(rate):
    return "-" if not rate else "%g Mbit/s" % (rate_bits(rate) / 1e6)


def plot(res, base):
    plt = bench.pyplot()
    if plt is None:
        return []
    layouts = list(dict.fromkeys((r["racks"], r["oversubscription"], r["code"])
                                 for r in res["runs"]))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    width = 0.8 / max(1, len(layouts))
    routes = list(dict.fromkeys(r["route"] for r in res["runs"]))
    means = route_means(res["runs"])
    for i, lay in enumerate(layouts):
        rows = {route: m for (racks, over, code, route), m in means.items()
                if (racks, over, code) == lay}
        xs = [j + i * width for j in range(len(routes))]
        label = "%d racks 1:%g %s" % lay
        axes[0].bar(xs, [rows[r]["rate_MBps"] if r in rows else 0 for r in routes], width,
                    label=label)
        axes[1].bar(xs, [rows[r]["cross_rack_per_byte"] if r in rows else 0 for r in routes],
                    width, label=label)
    for ax, title in ((axes[0], "rebuild rate, MB/s"),
                      (axes[1], "cross-rack bytes per rebuilt byte")):
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(routes))])
        ax.set_xticklabels(routes, rotation=20, fontsize=8)
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = base + ".png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return [path]


if __name__ == "__main__":
    sys.exit(0 if bench.report_from(sys.argv[1:], write_report) else main())
