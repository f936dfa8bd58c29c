"""The testbed's one experiment, shared by the demo, the benchmark and the fault tests: lose
DataNodes (kill -9), let the NameNode schedule reconstruction, wait until every lost internal
block (or replica) exists again, and check every rebuilt copy byte for byte against the copy
the killed DataNode left on its disk."""

import re
import time

from . import hadoop
from .net import TestbedError


class Files:
    """Files written with reproducible content (NetecProbe: content = f(seed, position))."""

    def __init__(self, tb, directory, policy, count, size, seed=1, block_size=None):
        self.tb = tb
        # The client decides a file's (internal) block size: dfs.blocksize at write time.
        self.conf = [("dfs.blocksize", str(block_size))] if block_size else []
        self.dir = directory
        self.policy = policy
        self.paths = ["%s/f%02d" % (directory, i) for i in range(count)]
        self.size = size
        self.seed = seed

    def seed_of(self, path):
        return self.seed * 1000 + self.paths.index(path)

    def write(self):
        before = self._namenode_work()
        self.tb.make_dir(self.dir, self.policy)
        for p in self.paths:
            self.tb.probe("write", p, str(self.size), str(self.seed_of(p)), conf=self.conf)
        self.settle(before)
        return self

    # what the NameNode still has to do: blocks short of redundancy (missing ones too),
    # pending, scheduled or waiting to be deleted, over the whole namespace
    WORK = ("LowRedundancyBlocks", "UnderReplicatedBlocks", "PendingReconstructionBlocks",
            "ScheduledReplicationBlocks", "PendingDeletionBlocks")

    def _namenode_work(self):
        ns = self.tb.namesystem()
        return {key: ns.get(key, 0) or 0 for key in self.WORK}

    def settle(self, before=None, timeout=120):
        """Waits until the NameNode is done placing what was written: its work (WORK) back
        to what it was BEFORE the write (a file an earlier run left short of units stays
        short; none: to nothing) and, on a testbed with racks, every one of these files'
        groups whole (the units its length needs, each once) on as many racks as
        BlockPlacementPolicyRackFaultTolerant asks (min(units, racks with a live DataNode)),
        every replicated block on two (the default policy). A write under load can leave a
        block on fewer racks (the NameNode passes over DataNodes it finds too busy: "Not
        enough replicas was chosen. Reason: {NODE_TOO_BUSY=...}"); the NameNode then copies a
        unit to another rack and deletes the old copy. A DataNode killed before that is over
        is counted as losing a unit that is not lost (the run waits for a copy that never
        comes), or its loss is rebuilt beside the move: the racks benchmark's native RS(3,2)
        windows of about 28 s, where 8 s was usual."""
        before = before or {}
        racks = getattr(getattr(self.tb, "cfg", None), "racks", 0)
        m = re.search(r"(\d+)-(\d+)-(\d+)k$", self.policy or "")
        code = tuple(int(x) for x in m.groups()) if m else None  # k, m, cell KiB
        why = ["nothing asked yet"]

        def quiet():
            now = self._namenode_work()
            busy = {k: v for k, v in now.items() if v > before.get(k, 0)}
            if busy:
                why[0] = "the NameNode's %s" % ", ".join(
                    "%s %d (%d before the write)" % (k, v, before.get(k, 0))
                    for k, v in sorted(busy.items()))
            return not busy

        def placed(path, g, live_racks):
            indices = [u["index"] for u in g["units"]]
            hosts = [self.tb.host_of(u["dn"]) for u in g["units"]]
            where = "%s at %d" % (path, g["offset"])
            want = len(hosts)
            if self.policy:
                if code:
                    k, parity, cell = code
                    data = min(k, -(-g["bytes"] // (cell << 10)))
                    need = set(range(data)) | set(range(k, k + parity))
                    if set(indices) != need or len(indices) != len(need):
                        why[0] = "%s: units %s, not %s" % (where, sorted(indices), sorted(need))
                        return False
                    want = len(need)
                elif len(set(indices)) != len(indices):
                    why[0] = "%s: a unit held twice %s" % (where, sorted(indices))
                    return False
            want = min(want, live_racks) if self.policy else min(2, want, live_racks)
            on = {self.tb.rack_path(h) for h in hosts}
            if len(on) < want:
                why[0] = "%s: on %d racks (%s), the policy asks %d" % (
                    where, len(on), ", ".join(sorted(on)), want)
                return False
            return True

        def settled():
            if not quiet():
                return False
            if not racks:
                return True  # one rack: the NameNode moves nothing to place it
            live_racks = len({self.tb.rack_path(h) for h in self.tb.live_datanodes()})
            for path in self.paths:
                for g in self.tb.probe("locate", path)["groups"]:
                    if not placed(path, g, live_racks):
                        return False
            return quiet()

        try:
            self.tb.wait("the NameNode to finish placing %s" % self.dir, settled, timeout)
        except TestbedError as e:
            raise TestbedError("%s; last: %s" % (e, why[0])) from None
        return self

    def locate(self):
        """[(path, group offset, unit index, block id, holder host)] of every stored unit."""
        out = []
        for p in self.paths:
            for g in self.tb.probe("locate", p)["groups"]:
                for u in g["units"]:
                    out.append((p, g["offset"], u["index"], u["block"],
                                self.tb.host_of(u["dn"])))
        return out

    def verify(self, conf=()):
        for p in self.paths:
            r = self.tb.probe("verify", p, str(self.size), str(self.seed_of(p)), conf=conf)
            if not r["ok"]:
                raise TestbedError("%s differs from what was written at byte %d" % (
                    p, r["first_bad"]))

    def remove(self):
        self.tb.fs("-rm", "-r", "-skipTrash", self.dir)


class Outcome:
    """What one loss-and-rebuild measured."""

    def __init__(self):
        self.victims = []
        self.lost_blocks = {}       # block id -> path of the victim's copy
        self.rebuilt = {}           # block id -> [(host, equal?)]
        self.tasks = []             # router outcomes since the kill: dicts
        self.bytes = 0              # bytes rebuilt
        self.window_s = 0.0         # first task start .. last task end
        self.uplinks = {}           # rack -> (bytes into it, bytes out of it), with racks
        self.wall_s = 0.0           # kill .. every lost block stored again
        self.ingress = {}           # host -> bytes received during the run
        self.egress = {}            # host -> bytes sent during the run
        self.cpu = {}               # host -> CPU seconds during the run
        self.targets = set()        # hosts that received rebuilt blocks

    @property
    def all_equal(self):
        return bool(self.rebuilt) and all(
            copies and all(eq for _, eq in copies) for copies in self.rebuilt.values())

    @property
    def served_by(self):
        out = {}
        for t in self.tasks:
            out[t["route"]] = out.get(t["route"], 0) + 1
        return out

    @property
    def rate(self):
        """Rebuilt bytes per second over the reconstruction window."""
        return self.bytes / self.window_s if self.window_s > 0 else 0.0

    def busiest_link(self, link_bytes_per_s, shaped_hosts):
        """(host, direction, utilization) of the shaped link that carried the most over the
        reconstruction window: where the run was network-bound, if anywhere."""
        best = ("-", "-", 0.0)
        if self.window_s <= 0:
            return best
        for direction, counts in (("in", self.ingress), ("out", self.egress)):
            for h, n in counts.items():
                if h in shaped_hosts:
                    u = n / (self.window_s * link_bytes_per_s)
                    if u > best[2]:
                        best = (h, direction, u)
        return best

    @property
    def cross_rack_per_byte(self):
        """Bytes that left a rack over its uplink per rebuilt byte (what crossed the spine)."""
        out = sum(v[1] for v in self.uplinks.values())
        return out / self.bytes if self.bytes else 0.0

    @property
    def target_ingress_per_byte(self):
        got = sum(self.ingress.get(h, 0) for h in self.targets)
        return got / self.bytes if self.bytes else 0.0


def choose_victims(units, count, exclude=()):
    """The COUNT DataNodes holding the most units."""
    held = {}
    for u in units:
        if u[4] not in exclude:
            held[u[4]] = held.get(u[4], 0) + 1
    return [h for h, _ in sorted(held.items(), key=lambda kv: (-kv[1], kv[0]))][:count]


def lose_and_rebuild(tb, files, victims=None, count=1, replicated=False, during=None,
                     mid_task=None, mid_task_victims=(), timeout=600):
    """Kills VICTIMS (or the COUNT DataNodes holding most of FILES' units) with kill -9, waits
    until every lost block is stored again and checks every copy. DURING(tb, outcome), if given,
    runs right after the kill (a read to time). MID_TASK(tb, outcome), if given, runs as soon as
    a DataNode reports a reconstruction task in flight (a fault to inject); the blocks of
    MID_TASK_VICTIMS, the DataNodes it will kill, are checked too. Returns an Outcome."""
    units = files.locate()
    o = Outcome()
    o.victims = victims or choose_victims(units, count, exclude=mid_task_victims)
    lost = {u[3] for u in units if u[4] in o.victims or u[4] in mid_task_victims}
    holders = {}
    for u in units:
        holders.setdefault(u[3], set()).add(u[4])
    for v in list(o.victims) + list(mid_task_victims):
        for block, path in tb.replicas(v).items():
            if block in lost:
                o.lost_blocks[block] = path
    if len(o.lost_blocks) != len(lost):
        raise TestbedError("the victims' disks lack %d of the blocks the NameNode places there"
                           % (len(lost) - len(o.lost_blocks)))
    # Idle CPU of every daemon (heartbeats, JIT, GC) over 3 s, subtracted below, so that the
    # CPU figures are the reconstruction's own.
    idle0, t_idle = tb.cpu_seconds(), time.time()
    time.sleep(3)
    idle1 = tb.cpu_seconds()
    idle_rate = {h: (idle1[h] - idle0.get(h, idle1[h])) / (time.time() - t_idle) for h in idle1}
    dead_before = tb.namesystem().get("NumDeadDataNodes", 0)
    t_kill = time.time()
    for v in o.victims:
        tb.kill(v, 9)
    if during:
        during(tb, o)
    # Counters start when the NameNode declares the victims dead: reconstruction starts then.
    tb.wait_dead(o.victims, dead_before + len(o.victims))
    before_net, before_cpu, t_dead = tb.fabric.counters(), tb.cpu_seconds(), time.time()
    before_up = _uplinks(tb)
    if mid_task:
        tb.wait("a reconstruction task in flight", lambda: tb.in_flight() > 0, 120)
        mid_task(tb, o)
        o.victims += [v for v in mid_task_victims if v not in o.victims]

    def rebuilt():
        live = {h: tb.replicas(h) for h in tb.live_datanodes()}
        for block in o.lost_blocks:
            now = {h for h, reps in live.items() if block in reps}
            if not now - holders[block]:
                return False  # no new copy yet
            if replicated and len(now) < len(holders[block]):
                return False  # a replicated block is back at its old number of copies
        return tb.in_flight() == 0

    tb.wait("every lost block of %s stored again" % files.dir, rebuilt, timeout)
    o.wall_s = time.time() - t_kill
    after_net, after_cpu = tb.fabric.counters(), tb.cpu_seconds()
    after_up = _uplinks(tb)
    o.uplinks = {r: (after_up[r][0] - before_up[r][0], after_up[r][1] - before_up[r][1])
                 for r in after_up}
    busy = time.time() - t_dead
    o.ingress = {h: after_net[h][0] - before_net.get(h, (0, 0))[0] for h in after_net}
    o.egress = {h: after_net[h][1] - before_net.get(h, (0, 0))[1] for h in after_net}
    o.cpu = {h: max(0.0, after_cpu[h] - before_cpu.get(h, 0) - idle_rate.get(h, 0) * busy)
             for h in after_cpu if h not in o.victims}
    _check_copies(tb, o, holders)
    if replicated:
        _replication_window(tb, o, t_kill)
    else:
        _router_window(tb, o, t_kill)
    return o


def _uplinks(tb):
    """{rack: (bytes into it, bytes out of it)} of a testbed with racks, else {}."""
    racks = getattr(getattr(tb, "cfg", None), "racks", 0)
    return tb.uplink_counters() if racks else {}


def _check_copies(tb, o, holders):
    for block, original in o.lost_blocks.items():
        with open(original, "rb") as f:
            want = f.read()
        copies = []
        for h in tb.live_datanodes():
            path = tb.replicas(h).get(block)
            if path and h not in holders[block]:
                with open(path, "rb") as f:
                    copies.append((h, f.read() == want))
                o.targets.add(h)
            # Nothing partial may stay behind on any DataNode.
            if block in tb.replicas(h, "rbw"):
                copies.append((h + " (partial replica left in rbw)", False))
        o.rebuilt[block] = copies


def _router_window(tb, o, t_kill):
    since = int(t_kill * 1000)
    for dn in tb.live_datanodes():
        for line in tb.router(dn).get("RecentTasks", []):
            group, erased, route, nbytes, ms, start, others = line.split("\t", 6)
            if int(start) >= since:
                o.tasks.append({"dn": dn, "group": group, "erased": erased, "route": route,
                                "bytes": int(nbytes), "ms": int(ms), "start": int(start),
                                "others": others})
    served = [t for t in o.tasks if t["route"] != "none"]
    o.bytes = sum(t["bytes"] for t in served)
    if served:
        first = min(t["start"] for t in served)
        last = max(t["start"] + t["ms"] for t in served)
        o.window_s = max(0.001, (last - first) / 1000.0)


# DataNode.transferBlock and DataXceiver.writeBlock at INFO (Hadoop 3.4/3.5).
_TS = r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) "
_START = re.compile(_TS + r".*Starting thread to transfer .*blk_(\d+)_")
_RECEIVED = re.compile(_TS + r".*Received .*blk_(\d+)_\d+ src: .* of size (\d+)")


def _log_time(stamp):
    t = time.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S")
    return time.mktime(t) + int(stamp[20:]) / 1000.0


def _replication_window(tb, o, t_kill):
    """Re-replication leaves no router outcome: its window comes from the DataNodes' logs
    (the source's 'Starting thread to transfer', the target's 'Received ... of size')."""
    starts, ends = [], []
    for dn in tb.live_datanodes():
        try:
            with open(tb.log(dn)) as f:
                for line in f:
                    m = _START.match(line)
                    if m and int(m.group(2)) in o.lost_blocks:
                        t = _log_time(m.group(1))
                        if t >= t_kill - 1:
                            starts.append(t)
                    m = _RECEIVED.match(line)
                    if m and int(m.group(2)) in o.lost_blocks:
                        t = _log_time(m.group(1))
                        if t >= t_kill - 1:
                            ends.append(t)
                            o.bytes += int(m.group(3))
                            o.tasks.append({"dn": dn, "route": "replication",
                                            "bytes": int(m.group(3))})
        except OSError:
            pass
    if starts and ends:
        o.window_s = max(0.001, max(ends) - min(starts))


def describe(o):
    timed = [t for t in o.tasks if t.get("ms")]
    task = sum(t["bytes"] / t["ms"] / 1e3 for t in timed) / len(timed) if timed else 0
    return ("victims %s: %d blocks lost, %d tasks %s, %.1f MiB rebuilt in %.2f s (%.1f MB/s; "
            "one task %.1f MB/s), wall %.1f s, copies equal: %s" % (
                ",".join(o.victims), len(o.lost_blocks), len(o.tasks), o.served_by,
                o.bytes / 2**20, o.window_s, o.rate / 1e6, task, o.wall_s, o.all_equal))


def demo_routes(tb, out=print):
    """The demo on a running cluster (the testbed or containers): for each route in turn
    (switch, inec, native), DataNodes restarted with that route order (dead ones back as new,
    empty ones), NETEC-6-3 files written, the DataNode holding most of their units killed
    (kill -9), every lost block rebuilt and compared byte for byte with the dead DataNode's
    copy, the files read back; then a table. True only if every byte matched and each route
    served its tasks."""
    failures = 0
    rows = []
    for i, route in enumerate(["switch", "inec", "native"]):
        order = route if route == "native" else route + ",native"
        out("\n== route %s: DataNodes restarted with netec.route.order=%s" % (route, order))
        tb.restart_datanodes(route_order=order, revive=True)
        files = Files(tb, "/demo/%s" % route, "NETEC-6-3-1024k", 2,
                      6 * tb.cfg.block_size * 2 - 12345, seed=i + 1).write()
        o = lose_and_rebuild(tb, files)
        out("   " + describe(o))
        files.verify()
        ok = o.all_equal and set(o.served_by) == {route}
        failures += 0 if ok else 1
        rows.append((route, o, ok))
        files.remove()
    out("\n| route | tasks | served by | rebuilt MiB | window s | MB/s | rebuilding DNs' "
        "ingress per rebuilt byte | bytes match |")
    out("|---|---|---|---|---|---|---|---|")
    for route, o, ok in rows:
        out("| %s | %d | %s | %.1f | %.2f | %.1f | %.2f | %s |" % (
            route, len(o.tasks), o.served_by, o.bytes / 2**20, o.window_s, o.rate / 1e6,
            o.target_ingress_per_byte, "yes" if ok else "NO"))
    return failures == 0


__all__ = ["demo_routes", "Files", "Outcome", "lose_and_rebuild", "choose_victims", "describe", "hadoop"]
