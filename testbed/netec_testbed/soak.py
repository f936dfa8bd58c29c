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
import re
import time
import urllib.request

from . import hadoop
from .net import TestbedError

POLICIES = {"NETEC-3-2-1024k": 5, "NETEC-6-3-1024k": 9}   # policy -> units per group
KINDS = ["datanode_revived", "datanode_left_dead", "second_during_repair", "switch_restart",
         "link_cut"]
ORDER = "switch,inec,native"  # the switch serves; INEC while it is down; Hadoop's last
MARGIN_S = 2.0  # a failed task this close to a fault is the fault's


def schedule(seed, n=500):
    """The fault schedule of SEED: [(kind, gap s before it, u1, u2)], u1/u2 in [0, 1) choosing
    victims among the DataNodes alive then and the length of an outage. Every kind comes once
    in the first len(KINDS) faults (in the seed's order), so that a short soak has them all."""
    rnd = random.Random(seed)
    kinds = list(KINDS)
    rnd.shuffle(kinds)
    kinds += [rnd.choice(KINDS) for _ in range(n - len(kinds))]
    return [(k, rnd.uniform(3, 12), rnd.random(), rnd.random()) for k in kinds]


_BLOCK = re.compile(r"blk_(-?\d+)")


def _fsck_counts(text):
    """{name: count} of the web fsck's summary lines ("Missing block groups: 0 ...")."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z][A-Za-z -]+):\s+(\d+)", line)
        if m:
            out.setdefault(m.group(1).strip(), int(m.group(2)))
    return out


class Soak:
    def __init__(self, tb, seed, out=print):
        self.tb = tb
        self.seed = seed
        self.out = out
        self.policies = [p for p, width in POLICIES.items() if width < len(tb.datanodes)]
        if not self.policies:
            raise TestbedError("the soak needs at least %d DataNodes (RS(3,2) and a spare)"
                               % (min(POLICIES.values()) + 1))
        self.widest = max(POLICIES[p] for p in self.policies)
        self.dirs = ["/soak/" + p for p in self.policies]
        self.journal = os.path.join(tb.run_dir, "cl", "tmp", "soak-journal.jsonl")
        self.stop_file = os.path.join(tb.run_dir, "cl", "tmp", "soak-stop")
        self.faults = []        # {"kind", "start", "end", "victims", "recovered_s"}
        self.tasks = {}         # (dn, group, erased, start) -> task dict
        self.checks = []        # one dict a checkpoint
        self.killed = set()     # DataNodes the soak killed and has not revived
        self.crashed = []       # DataNodes found down that the soak did not kill
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
            self.load.wait()
            self.load = None
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

    def fsck(self, blocks=False):
        """The NameNode's fsck of /soak (its web servlet, as `hdfs fsck` asks it)."""
        url = "http://%s:%d/fsck?ugi=root&path=/soak%s" % (
            self.tb.ip("nn"), hadoop.NN_HTTP_PORT, "&files=1&blocks=1" if blocks else "")
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.read().decode("utf-8", "replace")

    def redundant(self):
        """Every block group of /soak whole (fsck counts the live replicas themselves, so a
        rebuild the NameNode has only scheduled does not count) and no task in flight."""
        c = _fsck_counts(self.fsck())
        whole = all(c.get(k, 1) == 0 for k in (
            "Under-erasure-coded block groups", "Missing block groups",
            "Corrupt block groups", "Missing internal blocks"))
        return whole and self.tb.in_flight() == 0

    def wait_redundant(self, timeout=600):
        t0 = time.time()
        # twice, 2 s apart: a task between two DataNodes' heartbeats is seen by neither
        self.tb.wait("full redundancy of /soak", self.redundant, timeout)
        time.sleep(2)
        self.tb.wait("full redundancy of /soak", self.redundant, timeout)
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
                    "dn": dn, "group": group, "erased": erased, "route": route,
                    "bytes": int(nbytes), "ms": int(ms), "start": int(start) / 1000.0,
                    "others": others}

    # ---- faults ----------------------------------------------------------------------------

    def live(self):
        return sorted(self.tb.live_datanodes())

    def check_crashes(self):
        """A DataNode down that the soak did not kill is a finding, never revived quietly."""
        for dn in self.tb.datanodes:
            if not self.tb.alive(dn) and dn not in self.killed and dn not in self.crashed:
                self.crashed.append(dn)
                self.out("soak: %s is down and the soak did not kill it (log %s)"
                         % (dn, self.tb.log(dn)))

    def kill_datanode(self, dn):
        dead_before = self.tb.namesystem().get("NumDeadDataNodes", 0)
        self.tb.kill(dn, 9)
        self.killed.add(dn)
        return dead_before + 1

    def revive(self, dn):
        self.tb.revive(dn)
        self.killed.discard(dn)
        self.tb.wait("%s's plugin" % dn,
                     lambda: self.tb.router(dn).get("Tasks") is not None, 120)

    def room(self):
        """Revives a DataNode the soak left dead if killing one more would leave too few for
        the widest group to be whole again."""
        for dn in sorted(self.killed):
            if len(self.live()) - 1 >= self.widest:
                break
            self.revive(dn)

    def inject(self, kind, u1, u2):
        tb = self.tb
        self.check_crashes()
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
                    hit = True
                except TestbedError:
                    hit = False  # no task ran long enough to be hit
                if hit:
                    rest = self.live()
                    b = rest[int(u2 * len(rest))]
                    f["victims"].append(b)
                    tb.wait_dead([a, b], self.kill_datanode(b))
                    self.revive(b)  # back empty: room for the widest group again
                else:
                    f["kind"] = kind = "datanode_left_dead"
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
                # at most 4 s: TCP's retransmission backoff delays the first heartbeat after
                # the link is back by up to about as long again, and at 14 s without one the
                # NameNode would call the DataNode dead (a loss, not a cut)
                time.sleep(1 + 3 * u2)
            finally:
                tb.fabric.set_link(dn, True)
        f["end"] = time.time()
        self.out("soak: %s %s (%.1f s)" % (kind, ",".join(f["victims"]) or "sw",
                                           f["end"] - f["start"]))

    # ---- checks ----------------------------------------------------------------------------

    def leftovers(self):
        """{host: [block ids]} in rbw or tmp on the live DataNodes, after each DataNode sent a
        full block report (an aborted write's replicas go only then)."""
        def found():
            out = {}
            for h in self.tb.live_datanodes():
                ids = sorted(set(self.tb.replicas(h, "rbw")) | set(self.tb.replicas(h, "tmp")))
                if ids:
                    out[h] = ids
            return out
        left = found()
        if left:
            for h in left:
                self.tb.exec_command("cl", ["hdfs", "dfsadmin", "-triggerBlockReport",
                                            "%s:%d" % (self.tb.ip(h), hadoop.DN_IPC_PORT)],
                                     capture_output=True)
            time.sleep(5)
            left = found()
        return left

    def checkpoint(self):
        """Stops the load, awaits redundancy, checks every file, the replicas on disk, fsck
        and the routers' records; then the load goes on. Returns the check's findings."""
        t0 = time.time()
        load = self.stop_load()
        self.check_crashes()
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
            try:
                answer = p.communicate(timeout=1800)[0]
            except BaseException:
                p.kill()
                p.wait()
                raise
        finally:
            self.tb.shape(link)
        try:
            check = json.loads(answer.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise TestbedError("the soak's check ended without an answer (exit %s; log %s)"
                               % (p.returncode, self.tb.log("cl")))
        fsck = self.tb.exec_command("cl", ["hdfs", "fsck", "/soak"], capture_output=True,
                                    text=True)
        groups = {m.group(1) for m in _BLOCK.finditer(self.fsck(blocks=True))}
        c = {"at": t0, "files": check["files"], "bytes": check["bytes"], "bad": check["bad"],
             "wrong_reads": [o for o in ops if o.get("first_bad", -1) >= 0],
             "read_errors": self.read_errors(ops),
             "fsck_healthy": "is HEALTHY" in fsck.stdout,
             "leftovers": self.leftovers(),
             "unserved_tasks": self.unserved(groups),
             "crashed": list(self.crashed),
             "seconds": round(time.time() - t0, 1)}
        if not c["fsck_healthy"]:
            c["fsck"] = fsck.stdout[-2000:] + fsck.stderr[-1000:]
        self.checks.append(c)
        self.out("soak: checkpoint: %d files, %.1f MiB verified; %s" % (
            c["files"], c["bytes"] / 2**20, "ok" if self.ok(c) else "FAILED: %s" % c))
        return c

    @staticmethod
    def ok(c):
        return (not c["bad"] and not c["wrong_reads"] and not c["read_errors"]
                and c["fsck_healthy"] and not c["leftovers"] and not c["unserved_tasks"]
                and not c["crashed"])

    def read_errors(self, ops):
        """Reads that failed (never more than m units of a group are down, so none may), but
        for those overlapping a link cut, which Hadoop's client too may see fail."""
        cuts = [f for f in self.faults if f["kind"] == "link_cut" and "end" in f]
        out = []
        for o in ops:
            if o["op"] in ("read", "pread") and not o["ok"] and o.get("first_bad", -1) < 0:
                s, e = o["t"] / 1000.0, o["t"] / 1000.0 + o["ms"] / 1000.0
                if not any(f["start"] - MARGIN_S <= e and f["end"] + MARGIN_S >= s
                           for f in cuts):
                    out.append(o)
        return out

    def unserved(self, groups):
        """Tasks no route served whose group still exists (GROUPS: block ids of /soak's block
        groups now) and was not rebuilt by a later task: a loss the routers left behind."""
        served = {}
        for t in self.tasks.values():
            if t["route"] != "none":
                g = _BLOCK.search(t["group"]).group(1)
                served[g] = max(served.get(g, 0), t["start"])
        out = []
        for t in self.tasks.values():
            if t["route"] == "none":
                g = _BLOCK.search(t["group"]).group(1)
                if g in groups and served.get(g, 0) <= t["start"]:
                    out.append(t)
        return out

    # ---- the run ---------------------------------------------------------------------------

    def run(self, minutes, checkpoint_minutes=None, faults=None):
        """Injects the seed's faults for MINUTES, then a quiet end and the last checkpoint.
        With FAULTS, exactly the first FAULTS of them however long they take (a short soak
        that must see every kind: a slow recovery must not crowd the last kind out), and
        MINUTES is only the least the run lasts."""
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
        next_check = (self.t0 + checkpoint_minutes * 60 if checkpoint_minutes
                      else float("inf"))  # the one check at the end
        self.start_load()
        time.sleep(10)  # files to lose before the first fault
        try:
            for n, (kind, gap, u1, u2) in enumerate(schedule(self.seed)):
                if faults is not None and n >= faults:
                    break
                if faults is None and time.time() + gap >= end - 20:
                    break
                time.sleep(gap)
                self.inject(kind, u1, u2)
                self.collect_tasks()
                if time.time() >= next_check:
                    self.checkpoint()
                    self.start_load()
                    next_check = time.time() + checkpoint_minutes * 60
            for dn in sorted(self.killed):
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
    first = min([f["start"] for f in faults] or [soak.t_end])
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
        md.append("| %s | %d | %.1f |" % (
            "none (each later rebuilt by another task, or its file deleted)" if r == "none"
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
           "Each: the load stopped, full redundancy awaited, every file the journal kept read "
           "through both clients and checked by `hdfs debug verifyEC`.", "",
           "| at s | files | MiB checked | files failing a check | wrong reads | read errors | "
           "fsck | rbw/tmp left | unserved tasks never rebuilt | DataNodes crashed |",
           "|---:|---:|---:|---:|---:|---:|---|---|---:|---|"]
    for c in soak.checks:
        md.append("| %d | %d | %.1f | %d | %d | %d | %s | %s | %d | %s |" % (
            c["at"] - soak.t0, c["files"], c["bytes"] / 2**20, len(c["bad"]),
            len(c["wrong_reads"]), len(c["read_errors"]),
            "HEALTHY" if c["fsck_healthy"] else "NOT HEALTHY", c["leftovers"] or "none",
            len(c["unserved_tasks"]), ", ".join(c["crashed"]) or "none"))
        for b in c["bad"][:10]:
            md.append("  - %s" % b)
    md += ["", "## Faults as run", "", "| at s | kind | victims | s | loss to full redundancy, s |",
           "|---:|---|---|---:|---:|"]
    for f in faults:
        md.append("| %.0f | %s | %s | %.1f | %s |" % (
            f["start"] - soak.t0, f["kind"], ",".join(f["victims"]) or "sw",
            f["end"] - f["start"], f["recovered_s"] if f["recovered_s"] is not None else "-"))
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
