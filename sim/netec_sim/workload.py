"""A whole-node recovery: groups placed as HDFS places them, one DataNode lost, the tasks the
NameNode gives out, and each route's traffic and CPU per rebuilt byte.

Placement (BlockPlacementPolicyRackFaultTolerant, the EC default): a group's n = k + m internal
blocks spread over the R racks as evenly as they go (n // R a rack, the n % R left over in
random racks; one a rack in n random racks when n < R), on distinct random DataNodes. The lost
DataNode holds a unit of every group simulated (the other groups move nothing): which unit is
drawn uniformly, so its rack is a fuller one in proportion to how many units it holds. Each
lost block is one task, given to a DataNode holding none of the group, in a rack holding the
fewest of its surviving units. Replication (the anchor): three replicas, one in a rack and two
in another (BlockPlacementPolicyDefault); the lost one drawn uniformly; the source is a
surviving replica, the new copy goes to the source's rack when the survivors span two racks,
to another rack when they share one; Hadoop limits such a task at its source. Or, as the
testbed does it (`written`): blocks written from a client in the first rack, whose DataNodes
get every first replica (the pair in another rack), and the lost DataNode the one holding most
of them; which replicas it held follows from its rack (with 3 DataNodes a rack over 4 racks,
most often the writer's: first replicas, alone in their rack, so every copy crosses racks).

Every random draw (placement, target, the NameNode's order of the survivors) is made once per
group in the constructor, so every route is judged on the same groups and targets.

Routes, per rebuilt byte (one row):
  native           k survivors in the NameNode's order (it ignores racks) each send a block's
                   worth to the target, which decodes
  switch           the same k send to a switch on the spine, which sends one stream down to
                   the target: every survivor's stream crosses its rack's uplink
  switch-racks     k survivors chosen nearest (as for inec-chain); each rack's send to their
                   top-of-rack switch, which sends one partial sum on to the target's rack's
                   switch: one stream leaves each other rack holding survivors, the target's
                   rack's survivors cross nothing
  inec-chain       k survivors chosen nearest (the target's rack, then the racks holding most)
                   and chained a rack at a time, the target's last (RackAware in the plugin)
  inec-chain-flat  the chain over the k survivors in the NameNode's order
  replication      one replica holder sends the block to the target
"""

import random

import numpy as np

ROUTES = ("native", "switch", "switch-racks", "inec-chain", "inec-chain-flat", "replication")
GIB = float(1 << 30)

# CPU seconds per rebuilt GiB, per role, as the testbed measured them (docs/testbed-benchmark.md,
# RS(6,3), 4 MiB blocks, every daemon a JVM on 2 shared cores; RS(3,2) measured no less a
# byte, so no scaling with k): "target" the rebuilding DataNode, "survivor" each survivor (the
# table's survivors column over k), "switch" the software switch (a host process there; on a
# cluster an ASIC, no CPU). At 100 Mbit/s the same work cost more a byte than at 1 Gbit/s.
TESTBED_CPU = {
    "100mbit": {
        "native": {"target": 132.6, "survivor": 12.5 / 6},
        "switch": {"target": 118.5, "survivor": 40.3 / 6, "switch": 30.1},
        "inec-chain": {"target": 81.7, "survivor": 28.1 / 6},
        "replication": {"target": 28.7, "survivor": 0.0},
    },
    "1gbit": {
        "native": {"target": 69.6, "survivor": 3.4 / 6},
        "switch": {"target": 37.3, "survivor": 13.0 / 6, "switch": 12.1},
        "inec-chain": {"target": 21.4, "survivor": 7.3 / 6},
        "replication": {"target": 9.3, "survivor": 0.6},
    },
}
# routes the testbed did not measure cost what their nearest measured one costs
_SAME_CPU = {"switch-racks": "switch", "inec-chain-flat": "inec-chain"}

# CPU seconds per rebuilt GiB of the whole racks testbed (every daemon, idle subtracted: the
# benchmark's cores busy x window / GiB), per route and k, charged to one pool (the testbed's
# cores): for bin/netec-sim validate only. Measured by bin/netec-bench racks at 50 Mbit/s on 3
# racks at 1:4: k = 3 and 6 with 12 DataNodes (--codes rs32,rs63 --groups 6,
# docs/racks-benchmark-50mbit.json), k = 10 with 18 (--codes rs104 --datanodes 18,
# docs/racks-benchmark-rs104-50mbit.json), one run each. From k = 3 to 6 no route grew
# steadily (native 296 and 278, the spine switch 322 and 319, the switch by rack 507 and 394,
# the chain 221 and 188, the flat chain 189 and 281): the mean of the two stands for both, a
# route's runs within about 25% of it. At k = 10 the routes cost 1.2-2.6x that; those runs
# also had 18 DataNodes and 75 Mbit/s uplinks, so how much of it is k and how much the
# layout, one run cannot say. Between measured k, linear. The flat chain was not run at
# k = 10: it takes the chain's growth (x 441 / 204), as _SAME_CPU has them cost alike;
# replication, which has no k, its own figure. About twice the flat testbed's (two levels of
# bridges and shapers a packet, up to 3 switches a task).
RACKS_CPU = {
    3: {"native": 287.0, "switch": 321.0, "switch-racks": 451.0, "inec-chain": 204.0,
        "inec-chain-flat": 235.0, "replication": 49.0},
    10: {"native": 345.0, "switch": 829.0, "switch-racks": 688.0, "inec-chain": 441.0,
         "inec-chain-flat": 235.0 * 441.0 / 204.0, "replication": 49.0},
}
RACKS_CPU[6] = dict(RACKS_CPU[3])
CPU_PROFILES = sorted(TESTBED_CPU) + ["racks"]


def racks_cpu(route, k):
    """RACKS_CPU of ROUTE at K (seconds a rebuilt GiB): linear between the measured k, the
    nearest measured beyond them."""
    if route not in RACKS_CPU[3]:
        raise ValueError("route %s: no CPU figure in RACKS_CPU (routes: %s)" % (
            route, ", ".join(sorted(RACKS_CPU[3]))))
    ks = sorted(RACKS_CPU)
    return float(np.interp(k, ks, [RACKS_CPU[x][route] for x in ks]))


def cpu_costs(profile, route, k=6):
    """CPU seconds per rebuilt byte by role for ROUTE of a code with K data units under
    PROFILE (None: no CPU cost)."""
    if profile is None:
        return {}
    if profile == "racks":
        return {"target": racks_cpu(route, k) / GIB}
    table = TESTBED_CPU[profile]
    return {role: s / GIB for role, s in table[_SAME_CPU.get(route, route)].items()}


class Group:
    """One group's draws: its units' DataNodes (the lost one first), the target, the NameNode's
    order of the survivors and, for a replicated block, the source."""

    def __init__(self, units, target, order, source=None):
        self.units = units
        self.target = target
        self.order = order
        self.source = source


class Recovery:
    """LOST block groups of RS(K, M) (or replicated blocks), each holding a unit on the lost
    DataNode, on CLUSTER."""

    def __init__(self, cluster, k, m, lost, seed=1, replicated=False, written=None,
                 victim_rack=None, victim=None, targets=None):
        """WRITTEN (replicated only): that many blocks written from a client in the first
        rack, the DataNode holding most of them lost (LOST of them), in VICTIM_RACK when
        given (the rack a run's victim was in). VICTIM, TARGETS (erasure-coded only): the
        lost DataNode, and the DataNode the NameNode gave each lost block to, as a run
        had them; each group is then drawn as HDFS could have placed it given its target."""
        self.cluster = cluster
        self.k, self.m = k, m
        self.replicated = replicated
        self.rng = random.Random(seed)
        self.victim = victim or cluster.nodes[0]
        if written:
            if not replicated:
                raise ValueError("written: replicated blocks only")
            self.groups = self._written(written, lost, victim_rack)
        elif replicated:
            self.groups = [self._replicas() for _ in range(lost)]
        else:
            targets = list(targets or [])
            self.groups = [self._group(targets[i] if i < len(targets) else None)
                           for i in range(lost)]

    def _counts(self, n):
        c = self.cluster
        racks = list(range(c.racks))
        if n < c.racks:
            counts = {r: 0 for r in racks}
            for r in self.rng.sample(racks, n):
                counts[r] = 1
        else:
            counts = {r: n // c.racks for r in racks}
            for r in self.rng.sample(racks, n % c.racks):
                counts[r] += 1
        if max(counts.values()) > c.per_rack:
            raise ValueError("%d units need %d DataNodes a rack, racks hold %d" % (
                n, max(counts.values()), c.per_rack))
        return counts

    def _group(self, target=None):
        """A group holding a unit on the victim; with TARGET, one the NameNode could have
        given to TARGET (drawn again until TARGET holds none of it, in a rack holding the
        fewest of its survivors): the placement conditioned on the target a run saw."""
        if target is None:
            return self._draw_group()
        if target == self.victim:
            raise ValueError("target %s is the lost DataNode" % target)
        # The NameNode's rule first; where no placement meets it (a run's NameNode passed
        # over the rule's only free DataNode: its load, say), any placement TARGET holds
        # none of.
        for rule in (self._candidates, lambda units: set(self.cluster.nodes) - set(units)):
            for _ in range(2000):
                g = self._draw_group()
                if target in rule(g.units):
                    g.target = target
                    return g
        raise ValueError("no placement of %d units gives %s a lost block" % (
            self.k + self.m, target))

    def _draw_group(self):
        c, n = self.cluster, self.k + self.m
        counts = self._counts(n)
        # the lost unit drawn uniformly: its rack in proportion to the rack's units; racks are
        # alike, so that rack is relabelled as the lost DataNode's
        units_racks = [r for r, x in counts.items() for _ in range(x)]
        lost_rack = self.rng.choice(units_racks)
        mine = c.rack(self.victim)
        counts[lost_rack], counts[mine] = counts[mine], counts[lost_rack]
        units = [self.victim]
        for r in range(c.racks):
            want = counts[r] - (1 if r == mine else 0)
            free = [x for x in c.rack_nodes(r) if x != self.victim]
            units += self.rng.sample(free, want)
        alive = units[1:]
        target = self._target(units)
        order = self.rng.sample(alive, len(alive))
        return Group(units, target, order)

    def _target(self, units):
        """A DataNode holding none of UNITS, in a rack holding the fewest survivors."""
        return self.rng.choice(self._candidates(units))

    def _candidates(self, units):
        """The DataNodes the NameNode may give a group's lost unit to: holding none of UNITS
        (the lost one first), in a rack holding the fewest survivors."""
        c = self.cluster
        held = dict.fromkeys(range(c.racks), 0)
        for u in units[1:]:
            held[c.rack(u)] += 1
        fewest = min(held.values())
        taken = set(units)
        # in the order of c.nodes (racks in turn), as the draw below has always seen them
        return [x for r in range(c.racks) if held[r] == fewest for x in c.rack_nodes(r)
                if x not in taken]

    def _replicas(self):
        c = self.cluster
        mine = c.rack(self.victim)
        others = [r for r in range(c.racks) if r != mine]
        other = self.rng.choice(others)
        in_rack = lambda r: [x for x in c.rack_nodes(r) if x != self.victim]
        if self.rng.randrange(3) == 0:
            # the lost replica was the one alone in its rack: the other two share a rack
            survivors = self.rng.sample(in_rack(other), 2)
        else:
            # one of the pair: its partner in the same rack, the third in another
            survivors = [self.rng.choice(in_rack(mine)), self.rng.choice(in_rack(other))]
        return self._copy(survivors)

    def _written(self, blocks, lost, victim_rack=None):
        """LOST groups of BLOCKS written from the first rack (BlockPlacementPolicyDefault: the
        first replica on a DataNode of the writer's rack, the second in another rack, the third
        beside it), the DataNode holding most of them lost: in the writer's rack it held first
        replicas, alone in their rack; elsewhere one of a pair, its partner beside it."""
        c = self.cluster
        if c.racks < 2 or c.per_rack < 3:  # a pair, and a free DataNode beside it
            raise ValueError("written replicas need 2 racks of 3 DataNodes at least")
        # the second and third replicas: two DataNodes of a rack other than the writer's
        pair = lambda: self.rng.sample(c.rack_nodes(self.rng.randrange(1, c.racks)), 2)
        held = {}
        for _ in range(blocks):
            second_third = pair()
            for x in [self.rng.choice(c.rack_nodes(0))] + second_third:
                held[x] = held.get(x, 0) + 1
        among = c.nodes if victim_rack is None else c.rack_nodes(victim_rack)
        most = max(held.get(x, 0) for x in among)
        self.victim = self.rng.choice([x for x in among if held.get(x, 0) == most])
        mine = c.rack(self.victim)
        groups = []
        for _ in range(lost):
            if mine == 0:
                survivors = pair()
            else:
                survivors = [self.rng.choice([x for x in c.rack_nodes(mine)
                                              if x != self.victim]),
                             self.rng.choice(c.rack_nodes(0))]
            groups.append(self._copy(survivors))
        return groups

    def _copy(self, survivors):
        """The lost replica's group: a source among SURVIVORS, and the new copy's DataNode."""
        c = self.cluster
        units = [self.victim] + survivors
        source = self.rng.choice(survivors)
        spans_two = c.rack(survivors[0]) != c.rack(survivors[1])
        racks = [c.rack(source)] if spans_two else [
            r for r in range(c.racks) if r != c.rack(source)]
        free = [x for r in sorted(racks) for x in c.rack_nodes(r) if x not in units]
        return Group(units, self.rng.choice(free), survivors, source)

    def tasks(self, route, block_bytes, cpu_profile=None, switch_cpu=False):
        """{task id: (bytes, {resource: demand per rebuilt byte}, limited at)} of ROUTE: the
        DataNode whose running tasks Hadoop limits is the target (EC), or the source
        (replication)."""
        if (route == "replication") != self.replicated:
            raise ValueError("route %s on %s groups" % (
                route, "replicated" if self.replicated else "erasure-coded"))
        out = {}
        for i, g in enumerate(self.groups):
            d = self.demand(route, g, cpu_costs(cpu_profile, route, self.k), switch_cpu)
            out[i] = (block_bytes, d, g.source if route == "replication" else g.target)
        return out

    def demand(self, route, g, cpu, switch_cpu=False):
        c = self.cluster
        d = {}

        def add(res, x):
            if x:
                d[res] = d.get(res, 0.0) + x

        def send(src, dst):
            for res in c.path(src, dst):
                add(res, 1.0)

        t = g.target
        add(c.cpu(t), cpu.get("target", 0.0))
        if route == "replication":
            send(g.source, t)
            add(c.cpu(g.source), cpu.get("survivor", 0.0))
            return d
        if route == "inec-chain":
            chosen = self._by_rack(self._nearest(g.order, t)[:self.k], t)
        elif route == "switch-racks":  # the plugin's SwitchRoute chooses as INEC's planner does
            chosen = self._nearest(g.order, t)[:self.k]
        else:
            chosen = g.order[:self.k]
        for s in chosen:
            add(c.cpu(s), cpu.get("survivor", 0.0))
        if route == "native":
            for s in chosen:
                send(s, t)
        elif route == "switch":
            for s in chosen:
                send(s, None)
            send(None, t)
        elif route == "switch-racks":
            for s in chosen:
                send(s, ("tor", c.rack(s)))
            for r in sorted({c.rack(s) for s in chosen} - {c.rack(t)}):
                send(("tor", r), ("tor", c.rack(t)))
            send(("tor", c.rack(t)), t)
        else:  # a chain: each survivor to the next, the last to the target
            for a, b in zip(chosen, chosen[1:] + [t]):
                send(a, b)
        if switch_cpu and route.startswith("switch"):
            add(c.cpu("switch"), cpu.get("switch", 0.0))
        return d

    def _nearest(self, alive, target):
        """ALIVE in order of preference: the target's rack, then the racks holding most, in
        the order given within a rack."""
        c = self.cluster
        count = {}
        for u in alive:
            count[c.rack(u)] = count.get(c.rack(u), 0) + 1
        return sorted(alive, key=lambda u: (c.rack(u) != c.rack(target), -count[c.rack(u)],
                                            c.rack(u)))

    def _by_rack(self, chosen, target):
        """CHOSEN a rack at a time, the target's rack last."""
        c = self.cluster
        return sorted(chosen, key=lambda u: (c.rack(u) == c.rack(target), c.rack(u)))

    @staticmethod
    def cross_rack_per_byte(tasks):
        """Bytes that leave a rack over its uplink per rebuilt byte, over TASKS."""
        total = sum(b for b, _, _ in tasks.values())
        up = sum(b * x for b, d, _ in tasks.values() for res, x in d.items() if res[0] == "up")
        return up / total if total else 0.0
