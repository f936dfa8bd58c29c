"""Hosts as network namespaces behind top-of-rack bridges, with tc-shaped links.

Layout (prefix "ntb", subnet 198.18.100.0/24 from the benchmarking range 198.18.0.0/15):

    ntb-tor    a namespace holding the bridge br0 (a bridge in a namespace of its own is not
               touched by the root namespace's iptables, which Docker sets to drop forwarding)
    ntb-HOST   one namespace per host, its eth0 a veth whose peer ntbv-HOST is a bridge port
    PREFIXmgmt the root namespace's own port on the bridge (198.18.100.1), unshaped: the
               testbed polls the daemons' HTTP metrics through it and carries no data on it

A host's link is shaped in both directions by a token bucket (tc tbf) on the egress of each
end of its veth pair: eth0 (what the host sends) and ntbv-HOST (what it receives).

With racks (bridge fabric only), ntb-tor is the spine and each rack R has a namespace of its
own, ntb-rackR, holding its bridge br0 and its hosts' ports; its uplink is a veth pair,
"uplink" in ntb-rackR and ntbuR in ntb-tor, both bridge ports, shaped on both ends' egress as
host links are (what leaves the rack on "uplink", what enters it on ntbuR). Hosts given no rack (the NameNode,
the switch, the management port) stay on the spine. One subnet still: racks are bridges joined
by uplinks, as a layer-2 leaf-spine, so addresses and the daemons' configuration do not change.

With kind "bmv2" there is no bridge: the ntbv-* ports are BMv2's (p4fabric.py starts
simple_switch on them in ntb-tor), every port has the switch's MAC, every host knows every
other address (and the VIP) at that MAC (static neighbours: the P4 program routes IPv4 and
answers no ARP), and offloads are off on both ends of every veth (simple_switch reads frames
with libpcap: a TSO/GSO frame is larger than a port's MTU and a checksum-offloaded one is sent
on with its checksum unfinished).
"""

import json
import os
import re
import signal
import subprocess
import time

SUBNET = "198.18.100"
MGMT_IP = SUBNET + ".1"
# The BMv2 fabric's MAC on every port: hosts address every frame to it.
SWITCH_MAC = "02:00:c6:12:64:fe"
KINDS = ("bridge", "bmv2")
# A rack's end of its uplink, in the rack's namespace.
RACK_UPLINK = "uplink"


def mac_of(ip):
    """A host's MAC in the BMv2 fabric, from its address (02:00:c6:12:64:<last octet>)."""
    return "02:00:c6:12:64:%02x" % int(ip.rsplit(".", 1)[1])


class TestbedError(RuntimeError):
    """A testbed step that cannot go on; the message says what and how to fix it."""
    __test__ = False  # not a pytest test class


def holders_of(ip):
    """Root-namespace interfaces holding address IP (one testbed's management port at most:
    the subnet is the same for every prefix, so only one testbed runs at a time)."""
    out = json.loads(run("ip", "-j", "addr", "show") or "[]")
    return [i["ifname"] for i in out
            if any(a.get("local") == ip for a in i.get("addr_info", []))]


def run(*cmd, check=True, capture=True, timeout=60):
    """Runs a command; on failure raises TestbedError with the command and its stderr."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise TestbedError("%s failed (exit %d): %s" % (" ".join(cmd), p.returncode,
                                                        (p.stderr or "").strip()))
    return p.stdout if capture else ""


def require_root():
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces, veth, tc): run it as "
                           "root or with sudo")
    for tool in ("ip", "tc"):
        if subprocess.run(["sh", "-c", "command -v " + tool], stdout=subprocess.DEVNULL)\
                .returncode != 0:
            raise TestbedError("'%s' not found: install iproute2 (scripts/setup.sh does)" % tool)


def namespaces(prefix):
    """The namespaces whose names start with PREFIX- (leftovers of a testbed, or ours)."""
    out = run("ip", "netns", "list")
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return sorted(n for n in names if n.startswith(prefix + "-"))


def pids_in(ns):
    out = run("ip", "netns", "pids", ns, check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def kill_pids(pids, grace=10.0):
    """SIGTERM, then SIGKILL after GRACE seconds, to exactly these PIDs."""
    alive = [p for p in pids if _alive(p)]
    for p in alive:
        _signal(p, signal.SIGTERM)
    deadline = time.time() + grace
    while alive and time.time() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if _alive(p)]
    for p in alive:
        _signal(p, signal.SIGKILL)
    deadline = time.time() + 5
    while alive and time.time() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if _alive(p)]


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False


def rate_bits(rate):
    """'1gbit' / '400mbit' / '100mbit' / '5000kbit' -> bits per second."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmg]?)(bit|bps)", rate.strip().lower())
    if not m:
        raise TestbedError("link rate '%s': expected e.g. 100mbit, 400mbit, 1gbit" % rate)
    n = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return int(n * (8 if m.group(3) == "bps" else 1))


class Fabric:
    """The namespaces, veths and shaping of one testbed; KIND "bridge" (a Linux bridge in the
    tor namespace) or "bmv2" (the tor namespace's ports left to simple_switch)."""

    def __init__(self, prefix, kind="bridge", rack_of=None, fixed_macs=False):
        if kind not in KINDS:
            raise TestbedError("fabric '%s': expected one of %s" % (kind, ", ".join(KINDS)))
        self.prefix = prefix
        self.kind = kind
        self.tor = prefix + "-tor"
        self.mgmt = prefix + "mgmt"
        # host -> its rack (1..R); a host absent is on the spine (tor), as all are without racks
        self.rack_of = dict(rack_of or {})
        # every host's MAC from its address (mac_of), as the BMv2 fabric needs; also on the
        # bridges when P4 rack switches route to hosts by MAC
        self.fixed_macs = fixed_macs or kind == "bmv2"
        if self.rack_of and kind != "bridge":
            raise TestbedError("racks need the bridge fabric (the BMv2 fabric is one switch)")

    def ns(self, host):
        return "%s-%s" % (self.prefix, host)

    def rack_ns(self, rack):
        return "%s-rack%d" % (self.prefix, rack)

    def racks(self):
        return sorted(set(self.rack_of.values()))

    def switch_ns(self, host):
        """The namespace holding HOST's switch port: its rack's, or the spine's."""
        rack = self.rack_of.get(host)
        return self.tor if rack is None else self.rack_ns(rack)

    def port(self, host):
        """The bridge-side end of HOST's veth (at most 15 characters)."""
        return _ifname("%sv-%s" % (self.prefix, host))

    def uplink(self, rack):
        """The spine's end of RACK's uplink (the rack's end is RACK_UPLINK in its namespace)."""
        return _ifname("%su%d" % (self.prefix, rack))

    def create_tor(self):
        run("ip", "netns", "add", self.tor)
        run("ip", "-n", self.tor, "link", "set", "lo", "up")
        if self.kind == "bridge":
            run("ip", "-n", self.tor, "link", "add", "br0", "type", "bridge")
            run("ip", "-n", self.tor, "link", "set", "br0", "up")
        # The root namespace's management port: the testbed reads metrics through it.
        run("ip", "link", "add", self.mgmt, "type", "veth", "peer", "name", self.port("mgmt"),
            "netns", self.tor)
        self._plug(self.tor, self.port("mgmt"))
        if self.kind == "bmv2":
            run("ip", "link", "set", self.mgmt, "address", mac_of(MGMT_IP))
            _offloads_off(None, self.mgmt)
        run("ip", "addr", "add", MGMT_IP + "/24", "dev", self.mgmt)
        run("ip", "link", "set", self.mgmt, "up")

    def create_racks(self):
        """Each rack's namespace, bridge and uplink to the spine (tor: create_tor first)."""
        for rack in self.racks():
            ns = self.rack_ns(rack)
            run("ip", "netns", "add", ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", ns, "link", "add", "br0", "type", "bridge")
            run("ip", "-n", ns, "link", "set", "br0", "up")
            run("ip", "link", "add", self.uplink(rack), "netns", self.tor, "type", "veth",
                "peer", "name", RACK_UPLINK, "netns", ns)
            self._plug(self.tor, self.uplink(rack))
            self._plug(ns, RACK_UPLINK)

    def p4_rack_ns(self, rack):
        return "%s-p4r%d" % (self.prefix, rack)

    def create_p4_rack_switch(self, rack, vip):
        """RACK's P4 switch, one-armed: BMv2's namespace (p4_rack_ns, returned) with one port,
        p0, on the rack's bridge, where the rack's VIP lives (its MAC mac_of(VIP), a static
        entry in every bridge: the spine's and the other racks' reach it over the rack's
        uplink). The arm's bridge port learns nothing: what BMv2 sends out keeps its sender's
        source MAC."""
        ns, arm = self.p4_rack_ns(rack), _ifname("%sa%d" % (self.prefix, rack))
        run("ip", "netns", "add", ns)
        run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "link", "add", "p0", "netns", ns, "type", "veth", "peer", "name", arm,
            "netns", self.rack_ns(rack))
        run("ip", "-n", ns, "link", "set", "p0", "address", mac_of(vip))
        _offloads_off(ns, "p0")
        run("ip", "-n", ns, "link", "set", "p0", "up")
        self._plug(self.rack_ns(rack), arm)
        run("ip", "-n", self.rack_ns(rack), "link", "set", "dev", arm, "type", "bridge_slave",
            "learning", "off")
        _offloads_off(self.rack_ns(rack), arm)
        mac = mac_of(vip)
        run("bridge", "-n", self.rack_ns(rack), "fdb", "replace", mac, "dev", arm, "master",
            "static")
        run("bridge", "-n", self.tor, "fdb", "replace", mac, "dev", self.uplink(rack), "master",
            "static")
        for other in self.racks():
            if other != rack:
                run("bridge", "-n", self.rack_ns(other), "fdb", "replace", mac, "dev",
                    RACK_UPLINK, "master", "static")
        return ns

    def management_link(self, switch_host, asic_ns, cpu_ip, mgmt_ip):
        """The link from SWITCH_HOST (its control plane, MGMT_IP on mgmt0) to the BMv2 in
        namespace ASIC_NS (its thrift server, CPU_IP on cpu0), as a switch's CPU reaches its
        ASIC: not through the data plane."""
        run("ip", "link", "add", "mgmt0", "netns", self.ns(switch_host), "type", "veth",
            "peer", "name", "cpu0", "netns", asic_ns)
        run("ip", "-n", asic_ns, "addr", "add", cpu_ip + "/30", "dev", "cpu0")
        run("ip", "-n", asic_ns, "link", "set", "cpu0", "up")
        run("ip", "-n", self.ns(switch_host), "addr", "add", mgmt_ip + "/30", "dev", "mgmt0")
        run("ip", "-n", self.ns(switch_host), "link", "set", "mgmt0", "up")

    def static_neighbour(self, hosts, ip):
        """Every one of HOSTS resolves IP to mac_of(IP) (a P4 switch's VIP answers no ARP)."""
        for h in hosts:
            run("ip", "-n", self.ns(h), "neigh", "replace", ip, "lladdr", mac_of(ip), "dev",
                "eth0", "nud", "permanent")

    def _plug(self, ns, port):
        """A veth end in switch namespace NS: a bridge port, or one of BMv2's."""
        if self.kind == "bridge":
            run("ip", "-n", ns, "link", "set", "dev", port, "master", "br0", "up")
            return
        run("ip", "-n", ns, "link", "set", "dev", port, "address", SWITCH_MAC)
        _offloads_off(ns, port)
        run("ip", "-n", ns, "link", "set", "dev", port, "up")

    def add_host(self, host, ip):
        ns = self.ns(host)
        sw = self.switch_ns(host)
        run("ip", "netns", "add", ns)
        run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "link", "add", self.port(host), "netns", sw, "type", "veth", "peer",
            "name", "eth0", "netns", ns)
        self._plug(sw, self.port(host))
        if self.fixed_macs:
            run("ip", "-n", ns, "link", "set", "eth0", "address", mac_of(ip))
            _offloads_off(ns, "eth0")
        run("ip", "-n", ns, "addr", "add", ip + "/24", "dev", "eth0")
        run("ip", "-n", ns, "link", "set", "eth0", "up")

    def switch_ports(self, addresses):
        """BMv2's ports: [(port number, interface in the tor namespace, address, MAC)], one
        per entry of ADDRESSES ([(host, IPv4 address)], "mgmt" the management port),
        numbered from 1 in that order."""
        return [(i + 1, self.port(h), ip, mac_of(ip)) for i, (h, ip) in enumerate(addresses)]

    def neighbours(self, addresses, extra=()):
        """Every host of ADDRESSES (and the root namespace's management port) resolves every
        other address, and EXTRA ones (the VIP), to the switch's MAC: static entries, as the
        P4 program answers no ARP."""
        everyone = [ip for _, ip in addresses] + list(extra)
        for h, ip in addresses:
            dev = self.mgmt if h == "mgmt" else "eth0"
            lines = "".join("neigh replace %s lladdr %s dev %s nud permanent\n"
                            % (other, SWITCH_MAC, dev) for other in everyone if other != ip)
            cmd = ["ip"] + ([] if h == "mgmt" else ["-n", self.ns(h)]) + ["-batch", "-"]
            p = subprocess.run(cmd, input=lines, text=True, stderr=subprocess.PIPE)
            if p.returncode != 0:
                raise TestbedError("static neighbours of %s failed: %s" % (h, p.stderr.strip()))

    def shape(self, host, rate=None, delay_us=0, loss_pct=0.0):
        """Shapes HOST's link both ways (rate None: unshaped); delay/loss need netem."""
        self._shape(((self.ns(host), "eth0"), (self.switch_ns(host), self.port(host))), rate,
                    delay_us, loss_pct)

    def shape_uplink(self, rack, rate=None):
        """Shapes RACK's uplink both ways (rate None: unshaped)."""
        self._shape(((self.rack_ns(rack), RACK_UPLINK), (self.tor, self.uplink(rack))), rate, 0,
                    0.0)

    def _shape(self, ends, rate, delay_us, loss_pct):
        for ns, dev in ends:
            run("ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root",
                check=False)
            if rate is None and not delay_us and not loss_pct:
                continue
            parent = ["root"]
            if delay_us or loss_pct:
                netem = ["netem"]
                if delay_us:
                    netem += ["delay", "%dus" % delay_us]
                if loss_pct:
                    netem += ["loss", "%g%%" % loss_pct]
                p = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev,
                                    "root", "handle", "1:"] + netem, stderr=subprocess.PIPE,
                                   text=True)
                if p.returncode != 0:
                    raise TestbedError(
                        "--delay/--loss need tc's netem qdisc, which this kernel does not "
                        "offer (tc: %s); run without them" % p.stderr.strip())
                parent = ["parent", "1:1"]
            if rate is not None:
                bits = rate_bits(rate)
                # A bucket of 4 ms of traffic (at least 64 KiB, the largest GSO packet), and a
                # queue of 20 ms: close to a switch port's buffering at these rates.
                burst = max(64 * 1024, bits // 8 // 250)
                run("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, *parent,
                    "tbf", "rate", str(bits), "burst", str(burst), "latency", "20ms")

    def set_link(self, host, up):
        run("ip", "-n", self.switch_ns(host), "link", "set", self.port(host),
            "up" if up else "down")

    def counters(self):
        """{host: (rx_bytes, tx_bytes)} as seen by the host, from the bridge-side ports."""
        pre = self.prefix + "v-"
        result = {}
        for ns in [self.tor] + [self.rack_ns(r) for r in self.racks()]:
            for name, (tx, rx) in _port_bytes(ns).items():
                if name.startswith(pre):
                    # What the bridge port transmits, the host receives, and vice versa.
                    result[name[len(pre):]] = (tx, rx)
        return result

    def uplink_counters(self):
        """{rack: (bytes into the rack, bytes out of it)}, from the spine's end of each uplink
        (what it transmits enters the rack)."""
        ports = _port_bytes(self.tor)
        return {r: ports[self.uplink(r)] for r in self.racks()}

    def uplink_qdiscs(self, rack):
        """tc's qdiscs of RACK's uplink: (the rack's end, what leaves the rack; the spine's
        end, what enters it)."""
        return tuple(run("ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", dev)
                     for ns, dev in ((self.rack_ns(rack), RACK_UPLINK),
                                     (self.tor, self.uplink(rack))))

    def qdiscs(self, host):
        return run("ip", "netns", "exec", self.ns(host), "tc", "qdisc", "show", "dev", "eth0")


def _ifname(name):
    if len(name) > 15:
        raise TestbedError("interface name %s is too long: use a shorter --prefix" % name)
    return name


def _port_bytes(ns):
    """{interface: (tx_bytes, rx_bytes)} of namespace NS's links."""
    out = json.loads(run("ip", "-n", ns, "-s", "-j", "link", "show"))
    return {link["ifname"]: (link["stats64"]["tx"]["bytes"], link["stats64"]["rx"]["bytes"])
            for link in out if "stats64" in link and "ifname" in link}


def topology_script(racks):
    """A net.topology.script.file.name script: RACKS is {address: rack path}; Hadoop passes
    addresses as arguments and reads one rack path per argument (others: /default-rack)."""
    lines = ["#!/bin/sh", "# written by the NetEC testbed: address -> rack", "for a in \"$@\"; do",
             "  case \"$a\" in"]
    for address, rack in sorted(racks.items()):
        if not re.fullmatch(r"[0-9.]+", address) or not re.fullmatch(r"/[A-Za-z0-9_-]+", rack):
            raise TestbedError("topology: bad address %r or rack %r" % (address, rack))
        lines.append("    %s) echo %s ;;" % (address, rack))
    lines += ["    *) echo /default-rack ;;", "  esac", "done", ""]
    return "\n".join(lines)


def _offloads_off(ns, dev):
    """Checksum offload, TSO, GSO and GRO off on DEV (in namespace NS, None: the root's)."""
    cmd = ([] if ns is None else ["ip", "netns", "exec", ns]) + [
        "ethtool", "-K", dev, "tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off"]
    try:
        run(*cmd)
    except FileNotFoundError:
        raise TestbedError("the BMv2 fabric needs ethtool (offloads off): install it "
                           "(scripts/setup.sh does)")


def destroy(prefix, extra_pids=()):
    """Ends every process in PREFIX's namespaces (and EXTRA_PIDS), removes the namespaces and
    the management port. Safe to call on a half-built or already removed testbed."""
    spaces = namespaces(prefix)
    pids = set(extra_pids)
    for ns in spaces:
        pids.update(pids_in(ns))
    kill_pids(sorted(pids))
    for ns in spaces:
        run("ip", "netns", "del", ns, check=False)
    mgmt = prefix + "mgmt"
    if subprocess.run(["ip", "link", "show", mgmt], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode == 0:
        run("ip", "link", "del", mgmt, check=False)
