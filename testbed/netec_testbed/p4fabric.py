"""BMv2 as the testbed's fabric (`bin/netec-testbed up --fabric bmv2`).

simple_switch runs the datagram XOR program (switch-p4/p4src/v1model/netec_xor.p4) in the tor
namespace, in the bridge's place: every host's veth end there is one of its ports, so every
packet between hosts (HDFS RPC, block writes, heartbeats, the testbed's metrics polls, and the
NetEC datagrams) passes through the P4 pipeline. Plain IPv4 is routed by l3_forward; the
datagrams of a task are aggregated by the program's registers and leave as one RESULT stream
to the rebuilding DataNode.

The switch host (sw) runs the P4 control plane (netec_p4.control.netec_control, thrift
backend) instead of the Java software switch, on the same control port: DataNodes set tasks up
with it exactly as with the software switch, and it writes the tasks' entries into BMv2 as it
would into a Tofino through bfrt. It reaches simple_switch's thrift server over a management
link of its own (sw's mgmt0 198.18.101.2 <-> the tor namespace's cpu0 198.18.101.1), as a
switch's CPU reaches its ASIC, not through the data plane.

DataNodes speak the program's mode: datagrams (netec.switch.transport=udp), pre-multiplied
survivors (netec.switch.premultiply=true), 256 bytes a packet (netec.switch.payload.bytes).
"""

import json
import os
import subprocess
import sys
import time

import netec_p4
from netec_p4.bmv2 import p4tools

from . import net
from .net import TestbedError

PROGRAM = "netec_xor"
VIP = net.SUBNET + ".250"
THRIFT_PORT = 9090
# Packets each of BMv2's egress queues holds (its default, 64, drops a DATA packet between two
# passes when a burst fills the recirculation port's queue: the data plane then stalls the
# stripe rather than answer wrongly, and the task goes to the next route). A task keeps at
# most its EBSN window of stripes (S/2 = 32) times k survivors in flight, 3 passes each.
QUEUE_DEPTH = 4096
CPU_IP, SW_MGMT_IP = "198.18.101.1", "198.18.101.2"
AGENT_NETWORK = net.SUBNET + ".0/24"

# What the DataNodes and the client must ask of this switch (netec_control.PROGRAMS).
DATANODE_KEYS = {
    "netec.switch.transport": "udp",
    "netec.switch.premultiply": "true",
    "netec.switch.payload.bytes": "256",
}


def missing():
    """Why the BMv2 fabric cannot run here (None: it can): the P4 tools and BMv2's thrift
    Python package, which README.md's "P4 toolchain" says how to get."""
    reason = p4tools.skip_reason("p4c-bm2-ss", "simple_switch")
    if reason:
        return reason
    if p4tools.bm_runtime_path() is None:
        return "P4 toolchain: BMv2's thrift package bm_runtime not found beside simple_switch"
    import importlib.util
    if importlib.util.find_spec("thrift") is None:
        return "Python's thrift package is missing (scripts/setup.sh installs it)"
    return None


def compile_program(out_dir, log):
    """p4c-bm2-ss on the v1model twin (Testbed.up has checked the tools are there); returns
    the BMv2 JSON's path."""
    took, warnings, path = p4tools.compile_bmv2(out_dir, PROGRAM)
    with open(log, "a") as f:
        f.write("p4c-bm2-ss %s: %.1f s\n%s\n" % (PROGRAM, took, warnings))
    return path


def start_switch(fabric, addresses, json_path, log):
    """simple_switch in the tor namespace with a port for each of ADDRESSES (the testbed's
    [(host, address)]), and the management link to the switch host; returns the Popen once
    its thrift server answers."""
    fabric.management_link("sw", fabric.tor, CPU_IP, SW_MGMT_IP)
    fabric.neighbours(addresses, extra=[VIP])
    ports = [(number, port) for number, port, _ip, _mac in fabric.switch_ports(addresses)]
    return _simple_switch(fabric, fabric.tor, ports, json_path, log, "sw", CPU_IP,
                          "simple_switch")


def _simple_switch(fabric, ns, ports, json_path, log, switch_host, cpu_ip, what):
    """simple_switch in namespace NS with PORTS ([(number, interface)]), its queues deepened
    (QUEUE_DEPTH); returns the Popen once its thrift server answers SWITCH_HOST at CPU_IP."""
    cmd = ["ip", "netns", "exec", ns, p4tools.find("simple_switch"),
           "--thrift-port", str(THRIFT_PORT), "--device-id", "0"]
    for number, port in ports:
        cmd += ["-i", "%d@%s" % (number, port)]
    cmd.append(json_path)
    out = open(log, "a")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    out.close()
    wait_answering(fabric.ns(switch_host), cpu_ip, THRIFT_PORT, proc, log, what)
    _thrift(fabric, "from sswitch_runtime import SimpleSwitch\n"
                    "c = SimpleSwitch.Client(multiplexed(proto, 'simple_switch'))\n"
                    "c.set_all_egress_queue_depths(%d)\n" % QUEUE_DEPTH, switch_host, cpu_ip)
    return proc


# ---- P4 rack switches (bin/netec-testbed up --racks R --rack-switch bmv2) ----------------------
# Each rack's switch is BMv2 one-armed on the rack's bridge (net.Fabric.create_p4_rack_switch),
# serving the rack's VIP, its control plane on the rack's switch host (sw1, sw2, ...) in the
# Java software switch's place: partial sums over datagrams (docs/protocol.md), a child's
# stream from one BMv2 to its parent's over the uplinks.

def rack_vip(rack):
    return "%s.%d" % (net.SUBNET, 220 + rack)


def rack_mgmt(rack):
    """(BMv2's thrift address, its switch host's) on rack RACK's management link."""
    return "198.18.101.%d" % (4 * rack + 1), "198.18.101.%d" % (4 * rack + 2)


def start_rack_switch(fabric, rack, switch_host, json_path, log):
    """simple_switch for RACK in its own namespace, its one port the rack's VIP; returns the
    Popen once its thrift server answers the switch host."""
    cpu, mgmt = rack_mgmt(rack)
    ns = fabric.create_p4_rack_switch(rack, rack_vip(rack))
    fabric.management_link(switch_host, ns, cpu, mgmt)
    return _simple_switch(fabric, ns, [(1, "p0")], json_path, log, switch_host, cpu,
                          "simple_switch of rack %d" % rack)


def rack_control_plane_command(rack, addresses, vips, json_path, bind_ip, port):
    """RACK's P4 control plane on its switch host: every one of ADDRESSES ([(host, address)])
    and of the other racks' VIPS is behind the one port (through the rack's bridge)."""
    hosts = ",".join("%s=1/%s" % (ip, net.mac_of(ip))
                     for ip in [ip for _, ip in addresses] + [v for v in vips
                                                              if v != rack_vip(rack)])
    return _control_plane(hosts, rack_mgmt(rack)[0], rack_vip(rack), json_path, bind_ip, port)


def _answers(ns, ip, port):
    """Whether IP:PORT accepts a TCP connection from namespace NS."""
    probe = "import socket; socket.create_connection((%r, %d), 1).close()" % (ip, port)
    return subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", probe],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def control_plane_command(fabric, addresses, json_path, bind_ip, port):
    """The P4 control plane on the switch host: serves the protocol's control endpoint at
    BIND_IP:PORT, programs BMv2 over thrift, routes every one of ADDRESSES."""
    hosts = ",".join("%s=%d/%s" % (ip, number, mac)
                     for number, _port, ip, mac in fabric.switch_ports(addresses))
    return _control_plane(hosts, CPU_IP, VIP, json_path, bind_ip, port)


def _control_plane(hosts, cpu_ip, vip, json_path, bind_ip, port):
    """The control plane's command: BMv2's thrift at CPU_IP, VIP, the endpoint BIND_IP:PORT,
    HOSTS (--hosts: IP=port/MAC,...)."""
    return [sys.executable, "-m", "netec_p4.control.netec_control",
            "--backend", "thrift", "--thrift", "%s:%d" % (cpu_ip, THRIFT_PORT),
            "--config", json_path, "--program", PROGRAM, "--vip", vip,
            "--bind", bind_ip, "--port", str(port), "--agent-networks", AGENT_NETWORK,
            "--hosts", hosts]


def control_plane_env():
    """The control plane's environment: BMv2's thrift package (bm_runtime) importable, and
    netec_p4 from where this process found it (the launcher's PYTHONPATH or pytest's
    pythonpath, which a child does not inherit)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [p4tools.bm_runtime_path(),
                                                      netec_p4.SWITCH_P4,
                                                      env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _thrift(fabric, body, switch_host="sw", cpu_ip=CPU_IP):
    """Runs BODY against simple_switch's thrift server (at CPU_IP) from SWITCH_HOST's
    namespace, with `proto` (a binary protocol on an open transport) and `multiplexed(proto,
    service)` given; returns what it printed."""
    code = ("import json\n"
            "from thrift.protocol import TBinaryProtocol\n"
            "from thrift.protocol.TMultiplexedProtocol import TMultiplexedProtocol as multiplexed\n"
            "from thrift.transport import TSocket, TTransport\n"
            "t = TTransport.TBufferedTransport(TSocket.TSocket(%r, %d))\n"
            "proto = TBinaryProtocol.TBinaryProtocol(t)\n"
            "t.open()\n" % (cpu_ip, THRIFT_PORT)) + body + "t.close()\n"
    p = subprocess.run(["ip", "netns", "exec", fabric.ns(switch_host), sys.executable, "-c",
                        code],
                       capture_output=True, text=True, env=control_plane_env(), timeout=60)
    if p.returncode != 0:
        raise TestbedError("a thrift call to BMv2 failed: " + p.stderr.strip()[-800:])
    return p.stdout


def counters(fabric, rack=None):
    """The program's verdict counters (V_* -> DATA packets) of the fabric's BMv2 (or RACK's),
    read over thrift from its switch host's namespace: what the data plane itself counted."""
    where = ("sw", CPU_IP) if rack is None else ("sw%d" % rack, rack_mgmt(rack)[0])
    return json.loads(_thrift(fabric, (
        "from bm_runtime.standard import Standard\n"
        "std = Standard.Client(multiplexed(proto, 'standard'))\n"
        "print(json.dumps([std.bm_counter_read(0, 'XorIngress.verdicts', i).packets\n"
        "                  for i in range(8)]))\n"), *where))


def wait_answering(ns, ip, port, proc, log, what, timeout=60):
    """Until IP:PORT accepts connections from namespace NS; WHAT (process PROC, its output in
    LOG) exiting first or not answering in TIMEOUT s raises, naming it and LOG."""
    deadline = time.time() + timeout
    while not _answers(ns, ip, port):
        if proc.poll() is not None:
            raise TestbedError("%s exited (%d): see %s" % (what, proc.returncode, log))
        if time.time() > deadline:
            raise TestbedError("%s did not answer on %s:%d in %d s: see %s"
                               % (what, ip, port, timeout, log))
        time.sleep(0.3)


