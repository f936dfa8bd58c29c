"""A whole-node recovery: groups placed as HDFS places them, one DataNode lost, the tasks the
NameNode gives out, and each route's traffic and CPU per rebuilt byte.

Placement: a group's k + m internal blocks spread rack-fault-tolerantly
(BlockPlacementPolicyRackFaultTolerant, the EC default): racks filled in turn from a random
one, at most ceil((k + m) / R) a rack, on distinct random DataNodes. The lost DataNode holds a
unit of every group simulated (the other groups move nothing). Each lost block is one task,
given to a target in a rack holding the fewest of the group's units (the placement policy's
choice), on a DataNode holding none. Replication (the anchor) places three replicas as HDFS
does: one in a rack, two in another.

Routes, per rebuilt byte (one row):
  native           k survivors (the NameNode's choice ignores racks: random) each send a
                   block's worth to the target, which decodes
  switch           k survivors send to a switch on the spine, which sends one stream down to
                   the target: every survivor's stream crosses its rack's uplink
  switch-racks     each rack's survivors send to their top-of-rack switch, which sends one
                   partial sum on: one stream leaves each remote rack, one enters the target's
  inec-chain       k survivors chosen nearest (the target's rack, then the racks holding most)
                   and chained a rack at a time, the target's last: one stream crosses each
                   rack boundary of the chain
  inec-chain-flat  the same chain in the NameNode's (random) order
  replication      one replica holder sends the block to the target
"""

import math
import random

ROUTES = ("native", "switch", "switch-racks", "inec-chain", "inec-chain-flat", "replication")
GIB = float(1 << 30)

# CPU seconds per rebuilt GiB, per role, as the testbed measured them at 1 Gbit/s
# (docs/testbed-benchmark.md, RS(6,3), where its two cores bound): "target" the rebuilding
# DataNode, "survivor" each survivor (the table's survivors column over k), "switch" the
# software switch (on a cluster: an ASIC, no CPU).
TESTBED_CPU = {
    "native": {"target": 69.6, "survivor": 3.4 / 6},
    "switch": {"target": 37.3, "survivor": 13.0 / 6, "switch": 12.1},
    "switch-racks": {"target": 37.3, "survivor": 13.0 / 6, "switch": 12.1},
    "inec-chain": {"target": 21.4, "survivor": 7.3 / 6},
    "inec-chain-flat": {"target": 21.4, "survivor": 7.3 / 6},
    "replication": {"target": 9.3, "survivor": 0.6},
}


class Recovery:
    """LOST block groups of RS(K, M) all holding a unit on the lost DataNode, on CLUSTER."""

    def __init__(self, cluster, k, m, lost, seed=1, replicated=False):
        self.cluster = cluster
        self.k, self.m = k, m
        self.rng = random.Random(seed)
        self.victim = cluster.nodes[0]
        self.groups = [self._replicas() if replicated else self._group() for _ in range(lost)]

    def _group(self):
        c, n = self.cluster, self.k + self.m
        per_rack = math.ceil(n / c.racks)
        if per_rack > c.per_rack or n > len(c.nodes):
            raise ValueError("RS(%d,%d) needs %d DataNodes a rack on %d racks" % (
                self.k, self.m, per_rack, c.racks))
        first = c.rack(self.victim)
        racks = [(first + i) % c.racks for i in range(c.racks)]
        order = [first] + self.rng.sample(racks[1:], len(racks) - 1)
        count = {r: 0 for r in order}
        units = [self.victim]
        count[first] = 1
        i = 1
        while len(units) < n:
            r = order[i % len(order)]
            i += 1
            if count[r] >= per_rack:
                continue
            free = [x for x in c.nodes if c.rack(x) == r and x not in units]
            units.append(self.rng.choice(free))
            count[r] += 1
        return units

    def _replicas(self):
        c = self.cluster
        other = self.rng.choice([r for r in range(c.racks) if r != c.rack(self.victim)])
        two = self.rng.sample([x for x in c.nodes if c.rack(x) == other], 2)
        return [self.victim] + two

    def target(self, group):
        """A DataNode holding none of GROUP, in a rack holding the fewest of its survivors."""
        c = self.cluster
        alive = [u for u in group if u != self.victim]
        held = {r: sum(1 for u in alive if c.rack(u) == r) for r in range(c.racks)}
        fewest = min(held.values())
        racks = [r for r in range(c.racks) if held[r] == fewest]
        free = [x for x in c.nodes if c.rack(x) in racks and x not in group]
        return self.rng.choice(free)

    def tasks(self, route, block_bytes, switch_cpu=False):
        """{task id: (bytes, {resource: demand per rebuilt byte}, target)} of ROUTE. A task's
        work at its target is one thread's (HDFS runs a reconstruction task in one thread):
        its target CPU is also charged to a resource of its own, one core."""
        out = {}
        for i, g in enumerate(self.groups):
            t = self.target(g)
            d = self.demand(route, g, t, switch_cpu)
            d[("thread", i)] = TESTBED_CPU[route]["target"] / GIB
            out[i] = (block_bytes, d, t)
        return out

    @staticmethod
    def cross_rack_per_byte(tasks):
        """Bytes that leave a rack over its uplink per rebuilt byte, over TASKS."""
        total = sum(b for b, _, _ in tasks.values())
        up = sum(b * x for b, d, _ in tasks.values() for res, x in d.items() if res[0] == "up")
        return up / total if total else 0.0

    def demand(self, route, group, target, switch_cpu=False):
        c = self.cluster
        cpu = TESTBED_CPU[route]
        alive = [u for u in group if u != self.victim]
        d = {}

        def add(res, x):
            d[res] = d.get(res, 0.0) + x

        def send(src, dst):
            for res in c.path(src, dst):
                add(res, 1.0)

        add(c.cpu(target), cpu["target"] / GIB)
        if route == "replication":
            src = self.rng.choice(alive)
            send(src, target)
            add(c.cpu(src), cpu["survivor"] / GIB)
            return d
        if route == "inec-chain":
            chosen = self._nearest(alive, target)[:self.k]
            chosen = self._by_rack(chosen, target)
        else:
            chosen = self.rng.sample(alive, self.k)
        for s in chosen:
            add(c.cpu(s), cpu["survivor"] / GIB)
        if route == "native":
            for s in chosen:
                send(s, target)
        elif route == "switch":
            for s in chosen:
                send(s, None)
            send(None, target)
        elif route == "switch-racks":
            for s in chosen:
                send(s, ("tor", c.rack(s)))
            for r in {c.rack(s) for s in chosen} - {c.rack(target)}:
                send(("tor", r), ("tor", c.rack(target)))
            send(("tor", c.rack(target)), target)
        else:  # a chain: each survivor to the next, the last to the target
            for a, b in zip(chosen, chosen[1:] + [target]):
                send(a, b)
        if switch_cpu and "switch" in cpu and route.startswith("switch"):
            add(c.cpu("switch"), cpu["switch"] / GIB)
        return d

    def _nearest(self, alive, target):
        """ALIVE in order of preference: the target's rack, then the racks holding most."""
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
