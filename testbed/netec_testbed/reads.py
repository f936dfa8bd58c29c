"""bin/netec-bench reads: degraded reads through Hadoop's client and the plugin's, on the testbed.

For each code, one block group of whole stripes is written over unshaped links; then the
client's host loses its route to the DataNode holding one data unit (a prohibit route in the
client's namespace: connections to it fail at once, as to a dead host, while the NameNode, which
still hears its heartbeats, plans no reconstruction), every host link is shaped to the rate, and
one JVM on the client reads, through each client (Hadoop's DistributedFileSystem, the plugin
choosing by cost, the plugin forced through the switch, the plugin forced through INEC), REPEAT
times each kind of read of that group: a random 64 KiB range and a whole cell inside the lost
unit, the lost unit's every cell, a healthy unit's cell and every cell, a scan of the group.
Every read's bytes are compared with the file's content. A replicated block of a unit's size,
read whole, is the anchor of the healthy unit's read. Medians and p99 in ms, and the ratio of
Hadoop's time to the plugin's (by cost): above 1 the plugin is faster.
Then, unless --recon-groups 0, the same clients read cells of a lost unit while the NameNode
has it rebuilt: a file of that many block groups is written, the DataNode holding most of its
data units killed, and the reads overlapping the reconstruction window are timed.
Writes docs/reads-benchmark.md and a PNG beside it.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

from . import scenario
from .bench import CODES, _interrupted, machine, say
from .cluster import Config, Testbed
from .hadoop import REPO
from .net import TestbedError

KINDS = [("lost-64k", "64 KiB inside the lost unit"), ("lost-cell", "a cell of the lost unit"),
         ("lost-unit", "every cell of the lost unit"), ("scan", "scan of the group"),
         ("healthy-cell", "a cell of a healthy unit"),
         ("healthy-unit", "every cell of a healthy unit")]


def cut_client_from(tb, host):
    """The client's namespace gets a prohibit route to HOST: connects fail at once."""
    subprocess.run(["ip", "netns", "exec", tb.fabric.ns("cl"), "ip", "route", "add",
                    "prohibit", tb.ip(host) + "/32"], check=True)


def reconnect_client(tb, host):
    subprocess.run(["ip", "netns", "exec", tb.fabric.ns("cl"), "ip", "route", "del",
                    "prohibit", tb.ip(host) + "/32"], check=False)


def client_log_mark(tb):
    try:
        return os.path.getsize(tb.log("cl"))
    except OSError:
        return 0


def client_lines(tb, mark):
    """The client's log lines since MARK."""
    try:
        with open(tb.log("cl"), errors="replace") as f:
            f.seek(mark)
            return f.read().splitlines()
    except OSError:
        return []


def route_warnings(lines):
    """The WARN lines that name a route (why a read left the routes)."""
    return [l[:300] for l in lines if " WARN " in l
            and ("route" in l or "switch" in l or "inec" in l.lower())]


def choices(lines):
    """The cost client's choices as it logged them (at most one of each kind per 10 s): each
    way's estimate for a read of lost units, the reason behind its routes_chosen counts."""
    return [l[:400] for l in lines if "lost units' reads through" in l]


def one(tb, code, link, clients, repeat, seed, small_warmup=0):
    policy, k = CODES[code]
    block = tb.cfg.block_size
    tb.shape(None)
    files = scenario.Files(tb, "/reads/" + code, policy, 1, k * block, seed=seed).write()
    repl = scenario.Files(tb, "/reads/replicated-" + code, None, 1, block,
                          seed=seed + 1).write()
    path = files.paths[0]
    units = [u for u in files.locate() if u[2] < k]
    lost = units[0]
    healthy = next(u for u in units if u[4] != lost[4])
    cut_client_from(tb, lost[4])
    try:
        tb.shape(link)
        mark = client_log_mark(tb)
        # not a netec.* key: the plugin's client refuses netec.* keys it does not know
        warm = (("bench.reads.small-warmup", small_warmup),) if small_warmup else ()
        r = tb.probe("reads", path, str(files.size), str(files.seed_of(path)), "0",
                     str(lost[2]), str(healthy[2]), str(repeat), ",".join(clients), conf=warm)
        if not r["ok"]:
            raise TestbedError("a read of %s returned wrong bytes" % path)
        rp = tb.probe("read-range", repl.paths[0], str(block),
                      str(repl.seed_of(repl.paths[0])), "0", str(block), str(repeat + 1), "0")
        r["replicated_ms"] = rp["ms"]
        lines = client_lines(tb, mark)
        r["route_warnings"] = route_warnings(lines)
        r["choices"] = choices(lines)
    finally:
        reconnect_client(tb, lost[4])
        tb.shape(None)
        files.remove()
        repl.remove()
    r.update(code=code, link=link, lost=lost[2], healthy=healthy[2])
    return r


def paired(window, client):
    """The median over CLIENT's reads of Hadoop's time for the same read around it (the mean
    of the nearest "hadoop" reads before and after it) over its own: the load a reconstruction
    puts on the links changes through its window, so a read compares best with its neighbours.
    Above 1, CLIENT was faster. None for "hadoop" itself or without neighbours."""
    if client == "hadoop":
        return None
    ratios = []
    for i, (cl, t0, m, via) in enumerate(window):
        if cl != client:
            continue
        before = next((w[2] for w in reversed(window[:i]) if w[0] == "hadoop"), None)
        after = next((w[2] for w in window[i + 1:] if w[0] == "hadoop"), None)
        near = [x for x in (before, after) if x is not None]
        if near:
            ratios.append(sum(near) / len(near) / max(0.1, m))
    ratios.sort()
    return round(ratios[len(ratios) // 2], 2) if ratios else None


def during_reconstruction(tb, code, link, clients, groups, seed):
    """The lost unit's whole-cell preads while the NameNode has it rebuilt: a file of GROUPS
    block groups is written, the DataNode holding the most of its data units is killed, and one
    JVM on the client reads a cell of its unit in one group through each client in turn until
    every lost block is stored again. Reads overlapping the window from the first rebuild
    task's start to the last one's end are the ones counted (each read's bytes compared)."""
    policy, k = CODES[code]
    size = groups * k * tb.cfg.block_size
    tb.shape(None)
    files = scenario.Files(tb, "/reads-recon/" + code, policy, 1, size, seed=seed).write()
    path = files.paths[0]
    groups_at = [g["offset"] for g in tb.probe("locate", path)["groups"]]
    units = files.locate()
    victim = scenario.choose_victims([u for u in units if u[2] < k], 1)[0]
    lost = next(u for u in units if u[4] == victim and u[2] < k)
    stop = os.path.join(tb.run_dir, "cl", "tmp", "reads-stop")
    if os.path.exists(stop):
        os.remove(stop)
    reader = []

    def start_reader(t, o):
        reader.append(t.probe_async("reads-during", path, str(size), str(files.seed_of(path)),
                                    str(groups_at.index(lost[1])), str(lost[2]), stop,
                                    "300000", ",".join(clients)))

    tb.shape(link)
    mark = client_log_mark(tb)
    try:
        o = scenario.lose_and_rebuild(tb, files, victims=[victim], during=start_reader)
        time.sleep(1)  # a last round of reads after the rebuild
    finally:
        open(stop, "w").close()
    try:
        answer = json.loads(reader[0].communicate(timeout=600)[0])
        if not answer["ok"]:
            raise TestbedError("a read of %s during reconstruction returned wrong bytes" % path)
        served = [t for t in o.tasks if t["route"] != "none"]
        first = min(t["start"] for t in served)
        last = max(t["start"] + t["ms"] for t in served)
        out = {"window_ms": round(last - first), "tasks": len(served),
               "served_by": o.served_by, "clients": {},
               "route_warnings": route_warnings(client_lines(tb, mark))}
        window = [(cl, t0, m, via) for cl, t0, m, via in answer["reads"]
                  if t0 < last and t0 + m > first]
        # each read in the window: client, ms after the first task's start, time, served by
        out["reads"] = [[cl, round(t0 - first), m, via] for cl, t0, m, via in window]
        for c in clients:
            ms = sorted(m for cl, t0, m, via in window if cl == c)
            vias = {}
            for cl, t0, m, via in window:
                if cl == c:
                    vias[via] = vias.get(via, 0) + 1
            out["clients"][c] = {"reads": len(ms), "median": ms[len(ms) // 2] if ms else None,
                                 "p99": ms[min(len(ms) - 1, -(-99 * len(ms) // 100) - 1)]
                                 if ms else None, "via": vias}
            out["clients"][c]["paired"] = paired(window, c)
        return out
    finally:
        tb.shape(None)
        files.remove()
        tb.revive(victim)


def section(res, heading="##"):
    """The markdown of RES's runs: a table a code and link (and the reconstruction half's)."""
    L = []
    for r in res["runs"]:
        clients = list(r["clients"])
        spread = "hadoop" in clients and "hadoop-b" in clients
        L += ["%s %s, %s client link" % (heading, r["code"].upper(), r["link"]), "",
              "| read | " + " | ".join(clients) + " | ratio |"
              + (" hadoop / hadoop-b |" if spread else ""),
              "|---|" + "---:|" * (len(clients) + 1 + spread)]
        for kind, label in KINDS:
            cells = ["%.0f / %.0f" % (r["clients"][c][kind]["median"],
                                      r["clients"][c][kind]["p99"]) for c in clients]
            ratio = ""
            if "hadoop" in clients and "cost" in clients:
                ratio = "%.2f" % (r["clients"]["hadoop"][kind]["median"]
                                  / max(0.1, r["clients"]["cost"][kind]["median"]))
            if spread:  # two identical clients: the measurement's own spread
                ratio += " | %.2f" % (r["clients"]["hadoop"][kind]["median"]
                                      / max(0.1, r["clients"]["hadoop-b"][kind]["median"]))
            L.append("| %s | %s | %s |" % (label, " | ".join(cells), ratio))
        chosen = ", ".join("%s: %d through routes, %d through Hadoop's stream" % (
            c, r["clients"][c]["routes_chosen"], r["clients"][c]["hadoop_chosen"])
            for c in clients if c != "hadoop" and not c.startswith("hadoop-"))
        if "cost" in clients and "probes" in r:
            chosen += " (%d of the cost client's probed a route at a size it had not " \
                      "measured it near)" % r["probes"]
        L += ["", "A replicated block of the same size, read whole: %.0f ms (median). Lost "
              "units' reads (the untimed ones included): %s." % (r["replicated_ms"], chosen),
              ""]
        rc = r.get("recon")
        if rc:
            L += ["While reconstruction runs (the holder killed; a file of %d block groups "
                  "rebuilt, %d tasks, %s, over %d ms): a cell of the lost unit, median / p99 "
                  "ms (reads in the window):" % (
                      res["recon_groups"], rc["tasks"],
                      ", ".join("%s %d" % kv for kv in sorted(rc["served_by"].items())),
                      rc["window_ms"]), "",
                  "| read | " + " | ".join(rc["clients"]) + " | ratio |",
                  "|---|" + "---:|" * (len(rc["clients"]) + 1)]
            cells = []
            for c, v in rc["clients"].items():
                cells.append("-" if v["median"] is None else
                             "%.0f / %.0f (%d)" % (v["median"], v["p99"], v["reads"]))
            h, c = rc["clients"].get("hadoop"), rc["clients"].get("cost")
            ratio = ("%.2f" % (h["median"] / max(0.1, c["median"]))
                     if h and c and h["median"] and c["median"] else "")
            L += ["| a cell of the lost unit | %s | %s |" % (" | ".join(cells), ratio)]
            if any(v.get("paired") for v in rc["clients"].values()):
                L += ["| paired: Hadoop's neighbouring reads / the read (median) | %s | |" % (
                    " | ".join("-" if not v.get("paired") else "%.2f" % v["paired"]
                               for v in rc["clients"].values()))]
            L += [""]
        warned = r.get("route_warnings", []) + (rc or {}).get("route_warnings", [])
        if warned:
            L += ["The client logged %d route warning(s) in this run; the first: `%s`"
                  % (len(warned), warned[0].replace("`", "'")), ""]
    return L


def intro(res):
    small = res.get("small_warmup", 0)
    warm = ("%d untimed 64 KiB reads inside the lost unit through each client (through a "
            "client forced to a route, they run the routes' code, once a routed read, that "
            "many times on the reader and the survivors' DataNodes before anything is timed), "
            "then " % small) if small else ""
    return ("One block group of %d MiB units a code; the client cannot reach one data unit's "
            "holder (the NameNode still lists it: no reconstruction runs). Each cell: median / "
            "p99 ms of %d reads through one stream, after " % (res["block_mb"], res["repeat"])
            + warm + "three warm-up reads of each kind (in "
            "them the cost client measures each route: its first reads are not timed); the "
            "clients take turns read by read, in an order shuffled anew each repetition, so what "
            "loads the testbed falls on all alike. "
            "`ratio` = Hadoop's median / the plugin's (cost-chosen) median: above 1, the "
            "plugin's client is faster. Every read's bytes were compared with the file's.")


def report(res, out):
    L = ["# Degraded reads: Hadoop's client and the plugin's", "",
         "Printed by `%s` (%d s, %s). " % (res["command"], res["seconds"], machine())
         + intro(res), ""] + section(res)
    with open(out, "w") as f:
        f.write("\n".join(L))
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(res, f, indent=1)
    plot(res, os.path.splitext(out)[0] + ".png")


def run(tb, codes, links, clients, repeat, recon_groups, seed,
        recon_clients=("hadoop", "cost"), small_warmup=0):
    """Every code's and link's runs (the DataNodes restarted with every route)."""
    tb.restart_datanodes(route_order="switch,inec,native", revive=True)
    runs = []
    for code in codes:
        for link in links:
            seed += 10
            say("%s, %s client link" % (code, link))
            r = one(tb, code, link, clients, repeat, seed, small_warmup)
            if recon_groups:
                say("  while reconstruction runs (%d block groups)" % recon_groups)
                r["recon"] = during_reconstruction(tb, code, link, list(recon_clients),
                                                   recon_groups, seed + 5)
            say("  " + json.dumps(r))
            runs.append(r)
    return runs


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("matplotlib missing: no plot (pip install matplotlib)")
        return
    runs = res["runs"]
    fig, axes = plt.subplots(1, len(runs), figsize=(5.5 * len(runs), 4.2), squeeze=False)
    for ax, r in zip(axes[0], runs):
        clients = list(r["clients"])
        width = 0.8 / len(clients)
        for n, c in enumerate(clients):
            ys = [r["clients"][c][k]["median"] for k, _ in KINDS]
            ax.bar([i + n * width for i in range(len(KINDS))], ys, width, label=c)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(KINDS))])
        ax.set_xticklabels([k for k, _ in KINDS], rotation=30, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("median ms (log)")
        ax.set_title("%s, %s client link" % (r["code"].upper(), r["link"]))
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(prog="netec-bench reads", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--codes", default="rs32,rs63")
    p.add_argument("--links", default="100mbit,1gbit")
    p.add_argument("--clients", default="hadoop,cost,switch,inec")
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--datanodes", type=int, default=12)
    p.add_argument("--block-mb", type=int, default=4)
    p.add_argument("--recon-groups", type=int, default=48,
                   help="block groups rebuilt while the lost unit is read (0: no such half)")
    p.add_argument("--recon-clients", default="hadoop,cost",
                   help="the clients reading while reconstruction runs (each in turn: the "
                        "fewer, the more reads of each fall in the window)")
    p.add_argument("--small-warmup", type=int, default=300, metavar="N",
                   help="before the warm-up rounds, N 64 KiB reads inside the lost unit "
                        "through each client, untimed: a routed read's fixed path runs once a "
                        "read, so a few rounds leave it cold on the reader and the survivors' "
                        "DataNodes (the forced clients' reads warm it; the cost client's go "
                        "where it chooses)")
    p.add_argument("--out", default=os.path.join(REPO, "docs", "reads-benchmark.md"))
    a = p.parse_args(argv)
    if a.small_warmup < 0:
        p.error("--small-warmup must be at least 0")
    cmdline = "bin/netec-bench reads " + " ".join(argv if argv is not None else sys.argv[1:])
    tb = Testbed(Config(prefix="ntr", datanodes=a.datanodes, block_size=a.block_mb << 20))
    res = {"runs": [], "command": cmdline, "repeat": a.repeat, "block_mb": a.block_mb,
           "recon_groups": a.recon_groups, "small_warmup": a.small_warmup}
    # A kill (SIGTERM) takes the testbed down like Ctrl-C does (the finally below).
    signal.signal(signal.SIGTERM, _interrupted)
    started = time.time()
    failed = True
    try:
        tb.up(progress=say)
        res["runs"] = run(tb, a.codes.split(","), a.links.split(","), a.clients.split(","),
                          a.repeat, a.recon_groups, 300, a.recon_clients.split(","),
                          a.small_warmup)
        failed = False
    finally:
        # a failed run keeps its daemons' logs (the processes and namespaces go either way)
        tb.down(keep_run_dir=failed)
        if failed and tb.run_dir:
            say("failed: the daemons' logs are kept in %s/logs" % tb.run_dir)
    res["seconds"] = round(time.time() - started)
    report(res, a.out)
    say("wrote %s (and its PNG and JSON) in %d s" % (a.out, res["seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
