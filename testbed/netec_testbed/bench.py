"""bin/netec-bench testbed: every route's speed on the testbed, in one run, side by side.

For each code (RS(3,2), RS(6,3)) and route (native, switch, inec chain, inec tree, and 3-way
replication as the anchor) the DataNodes are restarted with that route order; for each link
rate, files are written over unshaped links, every host link is then shaped to the rate, the
DataNode holding the most internal blocks is killed with kill -9, and the run measures:
  - rate: bytes rebuilt per second from the first task's start to the last task's end (the
    routers' own outcome records, read from every DataNode's /jmx; for replication, the
    DataNodes' transfer log lines), and the mean rate of one task (one rebuilding node);
  - ingress: bytes the rebuilding DataNodes received per rebuilt byte (interface counters of
    their links, read on the bridge), and CPU seconds per rebuilt GiB of every process
    (/proc/PID/stat), by role;
  - every rebuilt block compared byte for byte with the dead DataNode's copy.
Before a route's measured runs, --warmup untimed rounds (default 1) of the same size let the
DataNodes' JIT compile the route's code, as on a cluster that has been up for a while (C2
needs some 10,000 packets per method: a survivor streams 2,048 per 64 MiB; lowering HotSpot's
thresholds made it compile far more of Hadoop and was slower).
Then degraded reads (bin/netec-bench reads' runs for one code at --reads-link rates: through
Hadoop's client, the plugin's by cost and forced through each route; with and without a
reconstruction running; --only-reads reruns just that section of an existing report) and
concurrent losses (1..3 DataNodes at once through the switch).
Writes docs/testbed-benchmark.md (tables, command line, machine) and PNG plots beside it.
"""

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time

from . import scenario
from .cluster import Config, Testbed, is_switch
from .hadoop import REPO
from .net import TestbedError, rate_bits

ROUTES = {  # name -> (DataNode route order, INEC scheme, replicated?)
    "native": ("native", "ecpipe", False),
    "switch": ("switch,native", "ecpipe", False),
    "inec-chain": ("inec,native", "ecpipe", False),
    "inec-tree": ("inec,native", "ppr", False),
    "replication": ("native", "ecpipe", True),
}
CODES = {"rs32": ("NETEC-3-2-1024k", 3), "rs63": ("NETEC-6-3-1024k", 6),
         "rs104": ("NETEC-10-4-1024k", 10)}


def say(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def run_one(tb, code, route, link, groups, seed, block_size):
    policy, k = CODES[code]
    order, scheme, replicated = ROUTES[route]
    tb.shape(None)
    size = groups * k * block_size
    files = scenario.Files(tb, "/bench/%s-%s-%s" % (code, route, link), None if replicated
                           else policy, 1, size, seed=seed, block_size=block_size).write()
    tb.shape(link)
    o = scenario.lose_and_rebuild(tb, files, replicated=replicated)
    files.remove()
    tb.shape(None)
    return o


def summarize(o, link, tb):
    shaped = [h for h in tb.hosts() if not is_switch(h) or tb.cfg.shape_switch]
    host, direction, util = o.busiest_link(rate_bits(link) / 8, shaped)
    roles = {"targets": sum(o.cpu.get(h, 0) for h in o.targets),
             "survivors": sum(v for h, v in o.cpu.items() if h.startswith("dn")
                              and h not in o.targets),
             "switch": sum(v for h, v in o.cpu.items() if is_switch(h)), "namenode": o.cpu.get("nn", 0)}
    gib = o.bytes / 2**30 if o.bytes else float("nan")
    tasks = [t for t in o.tasks if t.get("ms")]
    per_task = (sum(t["bytes"] / (t["ms"] / 1000.0) for t in tasks) / len(tasks)) if tasks else 0
    return {
        "victims": o.victims, "blocks": len(o.lost_blocks), "tasks": len(o.tasks),
        "served_by": o.served_by, "bytes": o.bytes, "window_s": round(o.window_s, 3),
        "rate_MBps": round(o.rate / 1e6, 2),
        "link_fraction": round(o.rate * 8 / rate_bits(link), 3),
        "task_rate_MBps": round(per_task / 1e6, 2),
        "task_link_fraction": round(per_task * 8 / rate_bits(link), 3),
        "ingress_per_byte": round(o.target_ingress_per_byte, 3),
        "cpu_s_per_gib": {r: round(v / gib, 2) for r, v in roles.items()},
        "busiest": "%s %s %.2f" % (host, direction, util),
        "survivor_egress_per_byte": round(sum(
            n for h, n in o.egress.items() if h.startswith("dn") and h not in o.targets)
            / o.bytes, 3) if o.bytes else 0,
        # CPU seconds of every daemon over the window's seconds: near the machine's core count,
        # the run was CPU-bound, whatever the links allowed
        "cores_busy": round(sum(roles.values()) / o.window_s, 2) if o.bytes else 0,
        "equal": o.all_equal, "wall_s": round(o.wall_s, 1)}


def degraded_reads(tb, codes, links, seed):
    """bin/netec-bench reads' runs for one code (RS(6,3) if run) at LINKS (comma-separated)."""
    from . import reads  # reads imports this module
    code = "rs63" if "rs63" in codes else codes[0]
    say("degraded reads (%s, %s links)" % (code, links))
    out = {"code": code, "repeat": 5, "recon_groups": 48, "block_mb": tb.cfg.block_size >> 20}
    out["runs"] = reads.run(tb, [code], links.split(","), ["hadoop", "cost", "switch", "inec"],
                            out["repeat"], out["recon_groups"], seed)
    return out


def reads_section(rd, command, seconds):
    from . import reads
    return (["## Degraded reads", "",
             "As `bin/netec-bench reads` measures them, in this run (`%s`, %d s in all). "
             % (command, seconds) + reads.intro(rd), ""] + reads.section(rd, heading="###"))


def splice_reads(res, out):
    """Replaces the degraded-read section of the report OUT (to the next section or the
    plots) with RES's, keeping the rest."""
    with open(out) as f:
        old = f.read().split("\n")
    start = next((i for i, l in enumerate(old) if l == "## Degraded reads"), None)
    if start is None:
        start = next((i for i, l in enumerate(old) if l.startswith("## Concurrent")
                      or l.startswith("![")), len(old))
        end = start
    else:
        end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")
                    or old[i].startswith("![")), len(old))
    new = old[:start] + reads_section(res["reads"], res["command"], res["seconds"]) + old[end:]
    with open(out, "w") as f:
        f.write("\n".join(new))


def concurrent(tb, code, groups, link, seed, max_lost):
    policy, k = CODES[code]
    out = {}
    for n in range(1, max_lost + 1):
        tb.shape(None)
        files = scenario.Files(tb, "/bench/concurrent-%d" % n, policy, 1,
                               groups * k * tb.cfg.block_size, seed=seed + n).write()
        tb.shape(link)
        o = scenario.lose_and_rebuild(tb, files, count=n)
        out[n] = summarize(o, link, tb)
        files.remove()
        for v in o.victims:
            tb.revive(v)
        say("  %d lost at once: %s" % (n, scenario.describe(o)))
    tb.shape(None)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="netec-bench testbed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--codes", default="rs32,rs63")
    p.add_argument("--routes", default="native,switch,inec-chain,inec-tree,replication")
    p.add_argument("--links", default="100mbit,400mbit,1gbit")
    p.add_argument("--datanodes", type=int, default=12)
    p.add_argument("--block-mb", type=int, default=4)
    p.add_argument("--groups", type=int, default=12, help="block groups written per run")
    p.add_argument("--single", type=int, default=0, metavar="MB",
                   help="one task per run instead: one block group of MB-MiB internal blocks, "
                        "so that one rebuilding node's link is what is measured (the paper's "
                        "single-block rate); skips degraded reads and concurrent losses")
    p.add_argument("--warmup", type=int, default=1, metavar="N",
                   help="untimed rounds per code and route before its measured ones, of the "
                        "same size: a DataNode's first tasks on a route run while the JIT "
                        "compiles it, which a long-running cluster has long done")
    p.add_argument("--reads-link", default="100mbit,1gbit",
                   help="client links of the degraded reads (bin/netec-bench reads' runs, "
                        "one code); empty: none")
    p.add_argument("--only-reads", action="store_true",
                   help="run only the degraded reads and splice their section into the "
                        "existing report (the rest of it, and its plots, kept)")
    p.add_argument("--concurrent", type=int, default=3, help="most DataNodes lost at once")
    p.add_argument("--out", default=os.path.join(REPO, "docs", "testbed-benchmark.md"))
    a = p.parse_args(argv)
    cmdline = "bin/netec-bench testbed " + " ".join(argv if argv is not None else sys.argv[1:])
    codes, routes, links = a.codes.split(","), a.routes.split(","), a.links.split(",")
    for c in codes:
        if c not in CODES:
            p.error("--codes: %s is not one of %s" % (c, ",".join(CODES)))
    for r in routes:
        if r not in ROUTES:
            p.error("--routes: %s is not one of %s" % (r, ",".join(ROUTES)))
    tb = Testbed(Config(prefix="ntb", datanodes=a.datanodes, block_size=a.block_mb << 20))
    # A kill (SIGTERM) takes the testbed down like Ctrl-C does (the finally below).
    signal.signal(signal.SIGTERM, _interrupted)
    results = {"rebuild": [], "reads": {}, "concurrent": {}}
    # block groups and internal block size of every run, warm-ups included
    groups, block = (1, a.single << 20) if a.single else (a.groups, tb.cfg.block_size)
    started = time.time()
    try:
        tb.up(progress=say)
        seed = 100
        for code in codes if not a.only_reads else ():
            for route in routes:
                order, scheme, _ = ROUTES[route]
                say("%s, route %s: DataNodes restarted with netec.route.order=%s, "
                    "netec.inec.scheme=%s" % (code, route, order, scheme))
                tb.restart_datanodes(route_order=order, inec_scheme=scheme, revive=True)
                for n in range(a.warmup):
                    seed += 1
                    o = run_one(tb, code, route, links[-1], groups, seed, block)
                    say("  warm-up %d (not measured): %s" % (n + 1, scenario.describe(o)))
                    for v in o.victims:
                        tb.revive(v)
                for link in links:
                    seed += 1
                    o = run_one(tb, code, route, link, groups, seed, block)
                    s = summarize(o, link, tb)
                    s.update(code=code, route=route, link=link)
                    results["rebuild"].append(s)
                    say("  %s: %s" % (link, scenario.describe(o)))
                    for v in o.victims:
                        tb.revive(v)
        if a.reads_link and not a.single:
            results["reads"] = degraded_reads(tb, codes, a.reads_link, seed + 50)
        if a.concurrent and not a.single and not a.only_reads:
            code = "rs63" if "rs63" in codes else codes[0]
            say("concurrent losses through the switch (%s, %s links)" % (code, links[-1]))
            tb.restart_datanodes(route_order="switch,native", revive=True)
            results["concurrent"] = concurrent(tb, code, a.groups, links[-1], seed + 80,
                                               a.concurrent)
    finally:
        tb.down()
    results["command"] = cmdline
    results["warmup"] = a.warmup
    results["seconds"] = round(time.time() - started)
    if a.only_reads:
        splice_reads(results, a.out)
        say("rewrote the degraded-read section of %s in %d s" % (a.out, results["seconds"]))
        return 0
    write_report(results, a.out)
    say("wrote %s (and its PNG plots and JSON) in %d s" % (a.out, results["seconds"]))
    bad = [r for r in results["rebuild"] if not r["equal"]]
    return 1 if bad else 0


def _interrupted(signum, frame):
    raise KeyboardInterrupt()


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    java = subprocess.run(["java", "-version"], stderr=subprocess.PIPE, text=True).stderr \
        .splitlines()[0]
    return "%d cores (%s), %.0f GiB, Linux %s, %s" % (os.cpu_count(), cpu, mem,
                                                     platform.release(), java)


def json_and_plots(res, out, plotter):
    """Writes RES as JSON beside the report OUT and its plots (PLOTTER(res, base)); returns
    the plots' paths."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    base = os.path.splitext(out)[0]
    with open(base + ".json", "w") as f:
        json.dump(res, f, indent=1)
    return plotter(res, base)


def write_report(res, out):
    plots = json_and_plots(res, out, plot)
    L = ["# Testbed benchmark", "",
         "Printed by `%s` in one run (%d s) on %s. Hadoop 3.4.3 daemons in network namespaces "
         "(bin/netec-testbed); every host link shaped both ways with tc tbf, the software "
         "switch's host unshaped (it stands for a switching ASIC). Figures are this run's; "
         "ratios compare routes measured in the same run, each after %d untimed warm-up "
         "round(s) on its route (the DataNodes' JIT compiling the route's code)." % (
             res["command"], res["seconds"], machine(), res.get("warmup", 0)), "",
         "## Reconstruction", "",
         "rate: rebuilt bytes / (last task end - first task start); task rate: mean of one "
         "task's bytes / its time (what one rebuilding node achieves); link: fraction of the "
         "link rate; ingress: bytes received by the rebuilding DataNodes' links per rebuilt "
         "byte; CPU: seconds per rebuilt GiB (targets = rebuilding DataNodes, survivors = the "
         "other live DataNodes); cores busy: every daemon's CPU seconds over the window's "
         "seconds (near %d, this machine's cores, the run was CPU-bound)." % os.cpu_count(), "",
         "busiest link: the shaped host link that carried the most during the window, and its "
         "utilization (1.00 = full): where a run was network-bound. Survivors' egress: bytes "
         "sent by the live DataNodes that did not rebuild, per rebuilt byte.", "",
         "| code | route | link | tasks | served by | MiB | rate MB/s | rate/link | task MB/s "
         "| task/link | ingress/B | survivors' egress/B | busiest link | CPU s/GiB targets "
         "| survivors | switch | cores busy | equal |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rebuild"]:
        c = r["cpu_s_per_gib"]
        timed = r["task_rate_MBps"] > 0  # re-replication has no per-task times
        L.append("| %s | %s | %s | %d | %s | %.0f | %.1f | %.2f | %s | %s | %.2f | %s | %s "
                 "| %.1f | %.1f | %.1f | %s | %s |" % (
                     r["code"], r["route"], r["link"], r["tasks"],
                     ", ".join("%s %d" % kv for kv in sorted(r["served_by"].items())),
                     r["bytes"] / 2**20, r["rate_MBps"], r["link_fraction"],
                     "%.1f" % r["task_rate_MBps"] if timed else "-",
                     "%.2f" % r["task_link_fraction"] if timed else "-", r["ingress_per_byte"],
                     r.get("survivor_egress_per_byte", "-"), r.get("busiest", "-"),
                     c["targets"], c["survivors"], c["switch"], r.get("cores_busy", "-"),
                     "yes" if r["equal"] else "NO"))
    L += ["", "Ratios against native in the same run (rate, and one task's rate):", "",
          "| code | link | route | rate / native | task rate / native |", "|---|---|---|---|---|"]
    for r in res["rebuild"]:
        nat = [n for n in res["rebuild"] if n["route"] == "native" and n["code"] == r["code"]
               and n["link"] == r["link"]]
        if nat and r["route"] != "native" and nat[0]["rate_MBps"] and nat[0]["task_rate_MBps"]:
            L.append("| %s | %s | %s | %.2fx | %.2fx |" % (
                r["code"], r["link"], r["route"], r["rate_MBps"] / nat[0]["rate_MBps"],
                r["task_rate_MBps"] / nat[0]["task_rate_MBps"]))
    if res["reads"]:
        L += [""] + reads_section(res["reads"], res["command"], res["seconds"])
    if res["concurrent"]:
        L += ["", "## Concurrent losses (switch route)", "",
              "| DataNodes lost at once | tasks | MiB | rate MB/s | task MB/s | equal |",
              "|---|---|---|---|---|---|"]
        for n, r in sorted(res["concurrent"].items(), key=lambda kv: int(kv[0])):
            L.append("| %s | %d | %.0f | %.1f | %.1f | %s |" % (
                n, r["tasks"], r["bytes"] / 2**20, r["rate_MBps"], r["task_rate_MBps"],
                "yes" if r["equal"] else "NO"))
    L += [""] + ["![%s](%s)" % (os.path.basename(p), os.path.basename(p)) for p in plots]
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")


def pyplot():
    """matplotlib's pyplot for files (Agg), or None (and a line saying so) without it."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("matplotlib missing: no plots (pip install matplotlib)")
        return None
    return plt


def plot(res, base):
    plt = pyplot()
    if plt is None:
        return []
    made = []
    for metric, label, suffix in (("rate_MBps", "rebuilt MB/s (all tasks)", "rate"),
                                  ("task_rate_MBps", "MB/s of one task", "task-rate")):
        codes = sorted({r["code"] for r in res["rebuild"]})
        fig, axes = plt.subplots(1, len(codes), figsize=(5.5 * len(codes), 4), squeeze=False)
        for ax, code in zip(axes[0], codes):
            rows = [r for r in res["rebuild"] if r["code"] == code]
            links = list(dict.fromkeys(r["link"] for r in rows))
            for route in dict.fromkeys(r["route"] for r in rows):
                ys = [next((r[metric] for r in rows if r["route"] == route and r["link"] == l),
                           0) for l in links]
                ax.plot(links, ys, marker="o", label=route)
            ax.plot(links, [rate_bits(l) / 8e6 for l in links], "k--", label="link rate")
            ax.set_title(code)
            ax.set_xlabel("link")
            ax.set_ylabel(label)
            ax.legend(fontsize=8)
        fig.tight_layout()
        path = "%s-%s.png" % (base, suffix)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        made.append(path)
    return made


def report_from(argv, writer):
    """`--report-from RUN.json`: rewrites a benchmark's report (markdown, plots) from a run's
    JSON with WRITER(results, RUN.md) and returns True; False for any other arguments."""
    if argv[:1] != ["--report-from"]:
        return False
    with open(argv[1]) as f:
        writer(json.load(f), os.path.splitext(argv[1])[0] + ".md")
    return True


if __name__ == "__main__":
    # python3 -m netec_testbed.bench --report-from docs/testbed-benchmark.json
    sys.exit(0 if report_from(sys.argv[1:], write_report) else main())
