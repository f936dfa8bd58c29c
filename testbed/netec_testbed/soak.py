"""The chaos soak: clients write, read and delete NETEC files of known content on the client
host (SoakLoad, one JVM: the plugin's client and Hadoop's) while a fault schedule drawn from a
seed kills DataNodes (kill -9; revived later as new, empty ones, or left dead), loses a second
DataNode while the first one's blocks are being rebuilt, kills and restarts the software switch
(the INEC participants, which live in the DataNodes, serve meanwhile) and cuts DataNode links
for less than the NameNode's dead interval. Never are more DataNodes down than leave every
group rebuildable: a DataNode is killed only once the NameNode reports full redundancy.

At each checkpoint (and at the end) the load is stopped, redundancy awaited, and every file the
journal says exists is read back through both clients and checked by Hadoop's `hdfs debug
verifyEC`; `hdfs fsck` must say HEALTHY; no DataNode may hold a replica in rbw; and every
reconstruction task the DataNodes' routers recorded must have been served by a route, or have
failed while a fault was under way (its survivor or the switch died). Same seed, same schedule.
"""

import json
import os
import random
import time

from . import hadoop
from .net import TestbedError

POLICIES = {"NETEC-3-2-1024k": 5, "NETEC-6-3-1024k": 9}   # policy -> units per group
KINDS = ["datanode_revived", "datanode_left_dead", "second_during_repair", "switch_restart",
         "link_cut"]
ORDER = "switch,inec,native"  # the switch serves; INEC while it is down; Hadoop's last
MARGIN_S = 2.0  # a failed task this close to a fault is the fault's


def schedule(seed, n=500):
    """The fault schedule of SEED: [(kind, gap s before it, u1, u2)], u1/u2 in [0, 1) choosing
    victims among the DataNodes alive then and the length of an outage."""
    rnd = random.Random(seed)
    return [(rnd.choice(KINDS), rnd.uniform(3, 12), rnd.random(), rnd.random())
            for _ in range(n)]


class Soak:
    def __init__(self, tb, seed, out=print):
        self.tb = tb
        self.seed = seed
        self.out = out
        self.policies = [p for p, width in POLICIES.items() if width < len(tb.datanodes)]
        self.widest = max(POLICIES[p] for p in self.policies)
        self.dirs = ["/soak/" + p for p in self.policies]
        self.journal = os.path.join(tb.run_dir, "cl", "tmp", "soak-journal.jsonl")
        self.stop_file = os.path.join(tb.run_dir, "cl", "tmp", "soak-stop")
        self.faults = []        # {"kind", "start", "end", "victims", "recovered_s"}
        self.tasks = {}         # (dn, group, erased, start) -> task dict
        self.checks = []        # one dict a checkpoint
        self.load = None
        self.rounds = 0

    # ---- the load --------------------------------------------------------------------------

    def start_load(self):
        if os.path.exists(self.stop_file):
            os.remove(self.stop_file)
        self.load = self.tb.probe_async("soak-load", ",".join(self.dirs),
                                        str(self.seed * 100 + self.rounds), self.stop_file,
                                        self.journal, "plugin,hadoop")
        self.rounds += 1

    def stop_load(self):
        open(self.stop_file, "w").close()
        try:
            answer, _ = self.load.communicate(timeout=600)
        except Exception:
            self.load.kill()
            raise TestbedError("the soak's load did not stop within 600 s")
        self.load = None
        try:
            return json.loads(answer.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise TestbedError("the soak's load ended without an answer: %r" % answer[-500:])

    def ops(self):
        with open(self.journal) as f:
            return [json.loads(line) for line in f if line.strip()]

    def files(self, ops):
        """{path: (size, seed)} the journal says exist: written whole, not deleted since."""
        live = {}
        for o in ops:
            if o["op"] in ("write", "append") and o["ok"]:
                live[o["path"]] = (o["size"], o["seed"])
            elif o["op"] == "append":
                live.pop(o["path"], None)  # appended in part, then deleted by the load
            elif o["op"] == "delete" and o["ok"]:
                live.pop(o["path"], None)
        return live

    # ---- the NameNode's view ---------------------------------------------------------------

    def redundant(self):
        ec = self.tb.jmx("nn", "Hadoop:service=NameNode,name=ECBlockGroupsState")
        return (ec.get("LowRedundancyECBlockGroups", 1) == 0
                and ec.get("MissingECBlockGroups", 1) == 0
                and ec.get("CorruptECBlockGroups", 1) == 0 and self.tb.in_flight() == 0)

    def wait_redundant(self, timeout=600):
        t0 = time.time()
        self.tb.wait("full redundancy at the NameNode", self.redundant, timeout)
        return time.time() - t0

    def collect_tasks(self):
        for dn in self.tb.live_datanodes():
            try:
                lines = self.tb.router(dn).get("RecentTasks", [])
            except OSError:
                continue
            for line in lines:
                group, erased, route, nbytes, ms, start, others = line.split("\t", 6)
                self.tasks[(dn, group, erased, start)] = {
                    "dn": dn, "group": group, "route": route, "bytes": int(nbytes),
                    "ms": int(ms), "start": int(start) / 1000.0, "others": others}

    # ---- faults ----------------------------------------------------------------------------

    def live(self):
        return sorted(self.tb.live_datanodes())

    def left_dead(self):
        return sorted(d for d in self.tb.datanodes if not self.tb.alive(d))

    def kill_datanode(self, dn):
        dead_before = self.tb.namesystem().get("NumDeadDataNodes", 0)
        self.tb.kill(dn, 9)
        return dead_before + 1

    def revive(self, dn):
        self.tb.revive(dn)
        self.tb.wait("%s's plugin" % dn,
                     lambda: self.tb.router(dn).get("Tasks") is not None, 120)

    def room(self):
        """Revives a DataNode left dead if killing one more would leave too few for the
        widest group to be whole again."""
        for dn in self.left_dead():
            if len(self.live()) - 1 >= self.widest:
                break
            self.revive(dn)

    def inject(self, kind, u1, u2):
        tb = self.tb
        f = {"kind": kind, "start": time.time(), "victims": [], "recovered_s": None}
        self.faults.append(f)
        if kind in ("datanode_revived", "datanode_left_dead", "second_during_repair"):
            self.room()
            live = self.live()
            a = live[int(u1 * len(live))]
            f["victims"].append(a)
            t_kill = time.time()
            tb.wait_dead([a], self.kill_datanode(a))
            if kind == "second_during_repair":
                try:
                    tb.wait("a reconstruction task in flight", lambda: tb.in_flight() > 0, 60)
                    rest = [d for d in self.live()]
                    b = rest[int(u2 * len(rest))]
                    f["victims"].append(b)
                    tb.wait_dead([a, b], self.kill_datanode(b))
                    self.revive(b)  # back empty: room for the widest group again
                except TestbedError:
                    f["kind"] = kind = "datanode_left_dead"  # no task ran long enough to hit
            self.wait_redundant()
            f["recovered_s"] = round(time.time() - t_kill, 1)  # loss to full redundancy
            if kind == "datanode_revived":
                self.revive(a)
        elif kind == "switch_restart":
            tb.kill("sw", 9)
            time.sleep(2 + 10 * u2)
            tb.start("sw")
        elif kind == "link_cut":
            live = self.live()
            dn = live[int(u1 * len(live))]
            f["victims"].append(dn)
            tb.fabric.set_link(dn, False)
            try:
                time.sleep(2 + 6 * u2)  # under the 14 s after which the NameNode calls it dead
            finally:
                tb.fabric.set_link(dn, True)
        f["end"] = time.time()
        self.out("soak: %s %s (%.1f s)" % (kind, ",".join(f["victims"]) or "sw",
                                           f["end"] - f["start"]))

    # ---- checks ----------------------------------------------------------------------------

    def checkpoint(self):
        """Stops the load, awaits redundancy, checks every file, the replicas on disk, fsck
        and the routers' records; then the load goes on. Returns the check's findings."""
        t0 = time.time()
        load = self.stop_load()
        self.wait_redundant()
        self.collect_tasks()
        ops = self.ops()
        files = self.files(ops)
        listing = os.path.join(self.tb.run_dir, "cl", "tmp", "soak-files.txt")
        with open(listing, "w") as f:
            for p, (size, seed) in sorted(files.items()):
                f.write("%s %d %d\n" % (p, size, seed))
        link = self.tb.cfg.link
        self.tb.shape(None)  # the check is no measurement: unshaped links read faster
        try:
            p = self.tb.probe_async("soak-check", listing)  # its answer, also when files differ
            answer = p.communicate(timeout=1800)[0]
        finally:
            self.tb.shape(link)
        try:
            check = json.loads(answer.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise TestbedError("the soak's check ended without an answer (exit %s; log %s)"
                               % (p.returncode, self.tb.log("cl")))
        fsck = self.tb.exec_command("cl", ["hdfs", "fsck", "/soak"], capture_output=True,
                                    text=True)
        rbw = {h: sorted(self.tb.replicas(h, "rbw")) for h in self.tb.live_datanodes()}
        c = {"at": t0, "files": check["files"], "bytes": check["bytes"],
             "bad": check["bad"] + [o for o in ops if o["op"] != "write" and o["op"] != "delete"
                                    and o.get("first_bad", -1) >= 0],
             "fsck_healthy": "is HEALTHY" in fsck.stdout,
             "rbw": {h: b for h, b in rbw.items() if b},
             "unexplained_failed_tasks": self.unexplained(),
             "load_wrong": load.get("wrong", 0), "seconds": round(time.time() - t0, 1)}
        if not c["fsck_healthy"]:
            c["fsck"] = fsck.stdout[-2000:] + fsck.stderr[-1000:]
        self.checks.append(c)
        self.out("soak: checkpoint: %d files, %.1f MiB verified; %s" % (
            c["files"], c["bytes"] / 2**20, "ok" if self.ok(c) else "FAILED: %s" % c))
        return c

    @staticmethod
    def ok(c):
        return (not c["bad"] and c["fsck_healthy"] and not c["rbw"]
                and not c["unexplained_failed_tasks"] and c["load_wrong"] == 0)

    def unexplained(self):
        """Tasks no route served that no fault explains."""
        out = []
        for t in self.tasks.values():
            if t["route"] != "none":
                continue
            s, e = t["start"] - MARGIN_S, t["start"] + t["ms"] / 1000.0 + MARGIN_S
            if not any(f["start"] <= e and f.get("end", time.time()) >= s
                       for f in self.faults):
                out.append(t)
        return out

    # ---- the run ---------------------------------------------------------------------------

    def run(self, minutes, checkpoint_minutes=None):
        tb = self.tb
        if tb.cfg.route_order != ORDER or tb.dead:
            tb.restart_datanodes(route_order=ORDER, revive=True)
        if not tb.alive("sw"):
            tb.start("sw")
        for p, d in zip(self.policies, self.dirs):
            tb.make_dir(d, p)
        if os.path.exists(self.journal):
            os.remove(self.journal)
        self.t0 = time.time()
        end = self.t0 + minutes * 60
        next_check = self.t0 + (checkpoint_minutes or minutes + 1) * 60
        self.start_load()
        time.sleep(10)  # files to lose before the first fault
        self.first_fault = time.time()
        try:
            for kind, gap, u1, u2 in schedule(self.seed):
                if time.time() + gap >= end - 20:
                    break
                time.sleep(gap)
                self.inject(kind, u1, u2)
                self.collect_tasks()
                if time.time() >= next_check:
                    self.checkpoint()
                    self.start_load()
                    next_check = time.time() + checkpoint_minutes * 60
            self.last_fault = time.time()
            for dn in self.left_dead():
                self.revive(dn)
            time.sleep(max(5.0, end - time.time()))  # a quiet end: the load alone
            self.checkpoint()
        except BaseException:
            if self.load is not None:  # the load JVM is ours: it ends with the soak
                open(self.stop_file, "w").close()
                try:
                    self.load.communicate(timeout=60)
                except Exception:
                    self.load.kill()
                    self.load.wait()
            raise
        self.t_end = time.time()
        return all(self.ok(c) for c in self.checks)


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, -(-q * len(xs) // 100) - 1))] if xs else None


def phase_of(op, faults, first, last):
    """before (the first fault), during (a fault until redundancy is back), between, after
    (the last fault's recovery)."""
    s, e = op["t"] / 1000.0, op["t"] / 1000.0 + op["ms"] / 1000.0
    if e < first:
        return "before"
    if any(f["start"] <= e and f["end"] >= s for f in faults):
        return "during"
    return "after" if s > last else "between"


def report(soak, command, directory):
    """soak-report.md and soak-report.png in DIRECTORY; returns the markdown."""
    ops = soak.ops()
    faults = [f for f in soak.faults if "end" in f]
    first = getattr(soak, "first_fault", soak.t0)
    last = max([f["end"] for f in faults] or [first])
    ok = all(soak.ok(c) for c in soak.checks)
    kinds = {}
    for f in faults:
        kinds.setdefault(f["kind"], []).append(f)
    written, sizes = 0, {}
    for o in ops:
        if o["op"] in ("write", "append") and o["ok"]:
            written += o["size"] - sizes.get(o["path"], 0)
            sizes[o["path"]] = o["size"]
    md = ["# Chaos soak", "",
          "Printed by `%s` (%d s, seed %d, %d DataNodes, policies %s). Verdict: **%s**." % (
              command, round(soak.t_end - soak.t0), soak.seed, len(soak.tb.datanodes),
              ", ".join(soak.policies), "nothing lost, every check passed" if ok
              else "FAILED (see the checkpoints)"), "",
          "## Faults", "", "| kind | count | loss to full redundancy, s (median / max) |",
          "|---|---:|---|"]
    for k in KINDS:
        fs = kinds.get(k, [])
        rec = [f["recovered_s"] for f in fs if f.get("recovered_s") is not None]
        md.append("| %s | %d | %s |" % (k, len(fs), "%.1f / %.1f" % (_pct(rec, 50), max(rec))
                                         if rec else "-"))
    routes = {}
    for t in soak.tasks.values():
        r = routes.setdefault(t["route"], [0, 0])
        r[0] += 1
        r[1] += t["bytes"]
    md += ["", "## Reconstruction tasks (the live DataNodes' routers' records)", "",
           "| served by | tasks | MiB |", "|---|---:|---:|"]
    for r, (n, b) in sorted(routes.items()):
        md.append("| %s | %d | %.1f |" % ("not served (a fault under way)" if r == "none"
                                          else r, n, b / 2**20))
    md += ["", "## Client operations", "",
           "Bytes written: %.1f MiB in %d files. Each cell: operations, errors, median / p99 "
           "ms; `during` is from a fault to full redundancy again." % (
               written / 2**20, sum(1 for o in ops if o["op"] == "write" and o["ok"])), "",
           "| client | op | before | during | between | after |", "|---|---|---|---|---|---|"]
    for client in ("plugin", "hadoop"):
        for op in ("write", "append", "read", "pread", "delete"):
            cells = []
            for ph in ("before", "during", "between", "after"):
                sel = [o for o in ops if o.get("client") == client and o["op"] == op
                       and phase_of(o, faults, first, last) == ph]
                ms = [o["ms"] for o in sel if o["ok"]]
                err = sum(1 for o in sel if not o["ok"])
                cells.append("%d, %d, %s" % (len(sel), err, "%.0f / %.0f" % (
                    _pct(ms, 50), _pct(ms, 99)) if ms else "-"))
            md.append("| %s | %s | %s |" % (client, op, " | ".join(cells)))
    md += ["", "## Checkpoints", "",
           "| at s | files | MiB verified (both clients, verifyEC) | wrong | fsck | rbw left | "
           "unexplained failed tasks |", "|---:|---:|---:|---:|---|---|---:|"]
    for c in soak.checks:
        md.append("| %d | %d | %.1f | %d | %s | %s | %d |" % (
            c["at"] - soak.t0, c["files"], c["bytes"] / 2**20, len(c["bad"]) + c["load_wrong"],
            "HEALTHY" if c["fsck_healthy"] else "NOT HEALTHY", c["rbw"] or "none",
            len(c["unexplained_failed_tasks"])))
    errors = [o for o in ops if not o["ok"] and o.get("error")]
    if errors:
        md += ["", "Operations that failed (an error, never wrong bytes), first 10:", ""]
        md += ["- %s %s %s: %s" % (o["client"], o["op"], o.get("path"), o["error"][:200])
               for o in errors[:10]]
    text = "\n".join(md) + "\n"
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "soak-report.md"), "w") as f:
        f.write(text)
    _plot(soak, ops, faults, os.path.join(directory, "soak-report.png"))
    return text


def _plot(soak, ops, faults, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(11, 4.5))
    colours = {"datanode_revived": "#f4a582", "datanode_left_dead": "#d6604d",
               "second_during_repair": "#b2182b", "switch_restart": "#92c5de",
               "link_cut": "#4393c3"}
    for f in faults:
        ax.axvspan(f["start"] - soak.t0, f["end"] - soak.t0, color=colours[f["kind"]],
                   alpha=0.3, lw=0)
    for op, marker in (("write", "^"), ("append", ">"), ("read", "o"), ("pread", "."),
                       ("delete", "x")):
        for client, c in (("plugin", "k"), ("hadoop", "g")):
            sel = [o for o in ops if o["op"] == op and o.get("client") == client]
            ax.scatter([o["t"] / 1000.0 - soak.t0 for o in sel],
                       [max(o["ms"], 0.1) for o in sel], s=9, marker=marker, c=c,
                       label="%s %s" % (client, op))
            bad = [o for o in sel if not o["ok"]]
            ax.scatter([o["t"] / 1000.0 - soak.t0 for o in bad],
                       [max(o["ms"], 0.1) for o in bad], s=40, marker="s",
                       facecolors="none", edgecolors="r")
    for k, c in colours.items():
        ax.axvspan(0, 0, color=c, alpha=0.3, label=k)
    ax.set_yscale("log")
    ax.set_xlabel("seconds since the soak began")
    ax.set_ylabel("operation time, ms")
    ax.set_title("Client operations during the soak (shaded: a fault until full redundancy; "
                 "red squares: errors)")
    ax.legend(fontsize=7, ncol=4, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["Soak", "schedule", "report", "KINDS", "hadoop"]
