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


def one(tb, code, link, clients, repeat, seed):
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
        r = tb.probe("reads", path, str(files.size), str(files.seed_of(path)), "0",
                     str(lost[2]), str(healthy[2]), str(repeat), ",".join(clients))
        if not r["ok"]:
            raise TestbedError("a read of %s returned wrong bytes" % path)
        rp = tb.probe("read-range", repl.paths[0], str(block),
                      str(repl.seed_of(repl.paths[0])), "0", str(block), str(repeat + 1), "0")
        r["replicated_ms"] = rp["ms"]
    finally:
        reconnect_client(tb, lost[4])
        tb.shape(None)
        files.remove()
        repl.remove()
    r.update(code=code, link=link, lost=lost[2], healthy=healthy[2])
    return r


def report(res, out):
    L = ["# Degraded reads: Hadoop's client and the plugin's", "",
         "Printed by `%s` (%d s, %s). One block group of %d MiB units a code; the client "
         "cannot reach one data unit's holder (the NameNode still lists it: no "
         "reconstruction runs). Each cell: median / p99 ms of %d reads through one stream, "
         "after one warm-up read of each kind. `ratio` = Hadoop's median / the plugin's "
         "(cost-chosen) median: above 1, the plugin's client is faster. Every read's bytes "
         "were compared with the file's." % (res["command"], res["seconds"], machine(),
                                              res["block_mb"], res["repeat"]), ""]
    for r in res["runs"]:
        clients = list(r["clients"])
        L += ["## %s, %s client link" % (r["code"].upper(), r["link"]), "",
              "| read | " + " | ".join(clients) + " | ratio |",
              "|---|" + "---:|" * (len(clients) + 1)]
        for kind, label in KINDS:
            cells = ["%.0f / %.0f" % (r["clients"][c][kind]["median"],
                                      r["clients"][c][kind]["p99"]) for c in clients]
            ratio = ""
            if "hadoop" in clients and "cost" in clients:
                ratio = "%.2f" % (r["clients"]["hadoop"][kind]["median"]
                                  / max(0.1, r["clients"]["cost"][kind]["median"]))
            L.append("| %s | %s | %s |" % (label, " | ".join(cells), ratio))
        chosen = ", ".join("%s: %d through routes, %d through Hadoop's stream" % (
            c, r["clients"][c]["routes_chosen"], r["clients"][c]["hadoop_chosen"])
            for c in clients if c != "hadoop")
        L += ["", "A replicated block of the same size, read whole: %.0f ms (median). Lost "
              "units' reads: %s." % (r["replicated_ms"], chosen), ""]
    with open(out, "w") as f:
        f.write("\n".join(L))
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(res, f, indent=1)
    plot(res, os.path.splitext(out)[0] + ".png")


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
    p.add_argument("--out", default=os.path.join(REPO, "docs", "reads-benchmark.md"))
    a = p.parse_args(argv)
    cmdline = "bin/netec-bench reads " + " ".join(argv if argv is not None else sys.argv[1:])
    tb = Testbed(Config(prefix="ntr", datanodes=a.datanodes, block_size=a.block_mb << 20))
    res = {"runs": [], "command": cmdline, "repeat": a.repeat, "block_mb": a.block_mb}
    # A kill (SIGTERM) takes the testbed down like Ctrl-C does (the finally below).
    signal.signal(signal.SIGTERM, _interrupted)
    started = time.time()
    try:
        tb.up(progress=say)
        tb.restart_datanodes(route_order="switch,inec,native", revive=True)
        seed = 300
        for code in a.codes.split(","):
            for link in a.links.split(","):
                seed += 10
                say("%s, %s client link" % (code, link))
                r = one(tb, code, link, a.clients.split(","), a.repeat, seed)
                say("  " + json.dumps(r))
                res["runs"].append(r)
    finally:
        tb.down()
    res["seconds"] = round(time.time() - started)
    report(res, a.out)
    say("wrote %s (and its PNG and JSON) in %d s" % (a.out, res["seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
