"""BMv2 simple_switch running the v1model twin, in a network namespace of its own, with a veth
pair per port and raw sockets on the far ends: the harness that replays packets through it.

    with Bmv2Switch(json_path, hosts) as sw:     # hosts: IPv4 address -> switch port
        backend = sw.backend()                   # control.backends.ThriftBackend, routes in
        out = sw.process(scapy_ip_packet)        # the IP packets that left the switch

The namespace (ntp4-<pid>-<n>) holds everything: the switch's ports s<i>, their peers h<i>, the
switch's thrift server on 127.0.0.1. This process enters it only to open its sockets (setns on
the calling thread, then back), so nothing is created in the host's own namespace. Needs root.
Cleanup kills the simple_switch it started (by PID) and deletes the namespace, also on failure.
"""

import contextlib
import ctypes
import itertools
import os
import select
import socket
import struct
import subprocess
import sys
import time

from netec_p4.bmv2 import p4tools
from netec_p4.control import backends

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
CLONE_NEWNET = 0x40000000
SWITCH_MAC = bytes.fromhex("020000000001")
_names = itertools.count()


def host_mac(port):
    return bytes.fromhex("0200000100%02x" % port)


@contextlib.contextmanager
def inside(netns):
    """Runs the block with this thread inside network namespace NETNS (sockets opened there
    stay there)."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/" + netns, os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns into " + netns)
        try:
            yield
        finally:
            if libc.setns(own, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(own)
        os.close(target)


def _ip(*args):
    subprocess.run(["ip"] + list(args), check=True, capture_output=True)


class Bmv2Switch:
    THRIFT_PORT = 9090

    def __init__(self, json_path, hosts, quiet_ms=30, program="netec"):
        """HOSTS: IPv4 address -> switch port (1..); each port gets a veth pair; PROGRAM:
        which P4 program JSON_PATH is (p4tools.PROGRAMS)."""
        self.json_path = json_path
        self.program = program
        self.hosts = dict(hosts)
        self.ports = sorted(set(self.hosts.values()))
        self.quiet = quiet_ms / 1000.0
        self.netns = "ntp4-%d-%d" % (os.getpid(), next(_names))
        self.proc = None
        self.socks = {}
        self.transport = None
        self._backend = None
        self.log_path = None

    # ---- life cycle ----------------------------------------------------------------------

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        _ip("netns", "add", self.netns)
        _ip("-n", self.netns, "link", "set", "lo", "up")
        subprocess.run(["ip", "netns", "exec", self.netns, "sysctl", "-q", "-w",
                        "net.ipv6.conf.all.disable_ipv6=1"], check=True)
        for p in self.ports:
            _ip("-n", self.netns, "link", "add", "s%d" % p, "type", "veth", "peer", "name",
                "h%d" % p)
            for end in ("s%d" % p, "h%d" % p):
                _ip("-n", self.netns, "link", "set", end, "up")
        cmd = ["ip", "netns", "exec", self.netns, p4tools.find("simple_switch"),
               "--thrift-port", str(self.THRIFT_PORT), "--device-id", "0"]
        for p in self.ports:
            cmd += ["-i", "%d@s%d" % (p, p)]
        cmd.append(self.json_path)
        self.log_path = os.path.join(os.path.dirname(self.json_path),
                                     "simple_switch-%s.log" % self.netns)
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        # BMv2's thrift package (bm_runtime, sswitch_runtime) is no part of this project: it
        # lives in the site-packages of the install simple_switch was found in, known only now,
        # and this process (the tests, the benchmark) imports it from there. First on the path
        # so that the package matches the simple_switch it talks to.
        runtime = p4tools.bm_runtime_path()
        if runtime and runtime not in sys.path:
            sys.path.insert(0, runtime)
        with inside(self.netns):
            for p in self.ports:
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                s.bind(("h%d" % p, 0))
                s.setblocking(False)
                self.socks[p] = s
            deadline = time.monotonic() + 30
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError("simple_switch exited (%d): see %s"
                                       % (self.proc.returncode, self.log_path))
                try:  # a plain connect first: thrift's client logs every refusal
                    socket.create_connection(("127.0.0.1", self.THRIFT_PORT), 1).close()
                    self.clients, self.transport = backends.ThriftBackend.connect(
                        "127.0.0.1", self.THRIFT_PORT)
                    break
                except Exception:  # refused (OSError) or thrift's TTransportException
                    if time.monotonic() > deadline:
                        raise RuntimeError("simple_switch's thrift server did not come up: "
                                           "see " + self.log_path)
                    time.sleep(0.2)

    def close(self):
        for s in self.socks.values():
            s.close()
        self.socks = {}
        if self.transport is not None:
            self.transport.close()
            self.transport = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        subprocess.run(["ip", "netns", "delete", self.netns], capture_output=True)

    def backend(self):
        """The ThriftBackend of this switch (one per connection), every host's route
        installed when first asked for."""
        if self._backend is None:
            self._backend = backends.ThriftBackend(self.clients, self.json_path, self.hosts,
                                                   self.program)
            self._backend.add_routes({ip: (port, int.from_bytes(host_mac(port), "big"))
                                      for ip, port in self.hosts.items()})
        return self._backend

    # ---- packets -------------------------------------------------------------------------

    def send(self, port, frame):
        self.socks[port].send(frame)

    def send_ip(self, raw_ip, port=None):
        """Sends an IPv4 packet (bytes) from its source host's port (or PORT)."""
        if port is None:
            port = self.hosts[socket.inet_ntoa(raw_ip[12:16])]
        self.send(port, SWITCH_MAC + host_mac(port) + b"\x08\x00" + raw_ip)

    def receive(self, expect=0, timeout=10.0, settle=None):
        """Frames that leave the switch, as (port, frame): waits for EXPECT of them (up to
        TIMEOUT s), then until no more arrives for SETTLE s (default: the quiet interval)."""
        settle = self.quiet if settle is None else settle
        got = []
        deadline = time.monotonic() + timeout
        by_fd = {s.fileno(): p for p, s in self.socks.items()}
        while True:
            now = time.monotonic()
            wait = max(0.0, deadline - now) if len(got) < expect else settle
            ready, _, _ = select.select(list(by_fd), [], [], wait)
            if not ready:
                if len(got) >= expect or time.monotonic() >= deadline:
                    return got
                continue
            for fd in ready:
                port = by_fd[fd]
                while True:
                    try:
                        frame, addr = self.socks[port].recvfrom(65535)
                    except BlockingIOError:
                        break
                    if addr[2] != PACKET_OUTGOING:
                        got.append((port, frame))

    def process(self, pkt, expect=0):
        """Sends scapy IP packet PKT from its source's port; returns the IP packets (scapy) that
        leave the switch, in arrival order. A frame that is not IPv4 is returned as bytes."""
        from scapy.layers.inet import IP
        self.send_ip(bytes(pkt))
        out = []
        for _port, frame in self.receive(expect):
            ethertype = struct.unpack("!H", frame[12:14])[0]
            out.append(IP(frame[14:]) if ethertype == 0x0800 else frame)
        return out

    def register_read(self, name, index):
        return self.backend().register_read(name, index)

    def queue_depth(self, port, packets):
        """Sets egress port PORT's queue to hold PACKETS (0: every packet to it is dropped; the
        v1model programs recirculate through port 68's queue), over simple_switch's own thrift
        service."""
        from sswitch_runtime import SimpleSwitch
        from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
        from thrift.transport import TSocket, TTransport
        with inside(self.netns):
            transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1",
                                                                      self.THRIFT_PORT))
            transport.open()
        try:
            SimpleSwitch.Client(TMultiplexedProtocol.TMultiplexedProtocol(
                TBinaryProtocol.TBinaryProtocol(transport), "simple_switch")
            ).set_egress_queue_depth(port, packets)
        finally:
            transport.close()
