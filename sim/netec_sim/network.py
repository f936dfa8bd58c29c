"""A cluster's resources: each host's link both ways, each rack's uplink both ways, and CPU.

A resource is a name and a capacity in bytes (or CPU-seconds) per second; a task's demand is
how much of each resource one rebuilt byte uses. The spine and the top-of-rack switches are
non-blocking (a leaf-spine's fabric), so only host links, uplinks and CPU can bind.
"""


class Cluster:
    """R racks of N DataNodes each, host links of host_Bps both ways, uplinks of (N x
    host_Bps) / oversubscription both ways. CPU: cores per DataNode, or one pool of cores
    shared by every daemon (cpu_pool: the testbed, where every host is a process on one
    machine). OTHER_HOSTS {rack: n}: hosts besides the DataNodes whose links a rack's uplink
    is sized for (the testbed's client in its first rack: that uplink is (N + 1) x host_Bps
    / oversubscription)."""

    def __init__(self, racks, per_rack, host_Bps, oversubscription=1.0, cores=16,
                 cpu_pool=None, other_hosts=None):
        if racks < 1 or per_rack < 1:
            raise ValueError("racks and DataNodes per rack must be at least 1")
        if host_Bps <= 0 or oversubscription < 1:
            raise ValueError("host rate must be positive and oversubscription at least 1")
        self.racks = racks
        self.per_rack = per_rack
        self.host_Bps = host_Bps
        self.oversubscription = oversubscription
        self.uplink_Bps = per_rack * host_Bps / oversubscription
        other_hosts = other_hosts or {}
        if any(r not in range(racks) or n < 0 for r, n in other_hosts.items()):
            raise ValueError("other hosts %r: racks are 0 to %d" % (other_hosts, racks - 1))
        self._uplink = {r: (per_rack + other_hosts.get(r, 0)) * host_Bps / oversubscription
                        for r in range(racks)}
        self.cores = cores
        self.cpu_pool = cpu_pool
        self.nodes = ["r%d-n%d" % (r, i) for r in range(racks) for i in range(per_rack)]
        self._rack = {n: r for r in range(racks) for n in self.nodes[r * per_rack:
                                                                      (r + 1) * per_rack]}

    def rack(self, node):
        return self._rack[node]

    def rack_nodes(self, rack):
        """RACK's DataNodes, in the order of NODES (a slice: placement draws from it per unit)."""
        return self.nodes[rack * self.per_rack:(rack + 1) * self.per_rack]

    def capacity(self, resource):
        kind = resource[0]
        if kind in ("out", "in"):
            return self.host_Bps
        if kind in ("up", "down"):
            return self._uplink[resource[1]]
        if kind == "cpu":
            return self.cpu_pool if self.cpu_pool is not None else self.cores
        raise ValueError("unknown resource %r" % (resource,))

    def cpu(self, node):
        """The CPU resource a daemon on NODE uses (the shared pool, or the node's own)."""
        return ("cpu", "pool") if self.cpu_pool is not None else ("cpu", node)

    def path(self, src, dst):
        """Resources a byte from host SRC to host DST crosses (None: the spine, for the
        switch on the spine; ("tor", r): rack r's top-of-rack switch)."""
        res = []
        src_rack = self._where(src)
        dst_rack = self._where(dst)
        if isinstance(src, str):
            res.append(("out", src))
        if src_rack != dst_rack:
            if src_rack is not None:
                res.append(("up", src_rack))
            if dst_rack is not None:
                res.append(("down", dst_rack))
        if isinstance(dst, str):
            res.append(("in", dst))
        return res

    def _where(self, end):
        if end is None:  # the spine
            return None
        if isinstance(end, tuple):  # a top-of-rack switch
            return end[1]
        return self._rack[end]
