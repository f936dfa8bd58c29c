"""BMv2's rate running a NetEC v1model program (a program, not a test; needs root and the P4
toolchain): RS(k, m) DATA packets from k survivor ports aggregated into RESULTs, against BMv2
forwarding plain IPv4 packets of the same size through the same program (l3_forward only),
measured in the same run. Correctness first: every RESULT is checked against the erased unit.

    python3 -m netec_p4.bmv2.bench [--k 6] [--stripes 512]      (bin/netec-bench bmv2)
        netec.p4: the TCP proxy, the switch multiplies, P = 64
    python3 -m netec_p4.bmv2.bench --program netec_xor           (bin/netec-bench bmv2 ...)
        netec_xor.p4: datagrams, the survivors multiply (gf_vect_mul), the switch XORs, P = 256

(switch-p4/ as the working directory or on PYTHONPATH, as bin/netec-bench sets it.)
"""

import argparse
import os
import secrets
import signal
import socket
import struct
import sys
import tempfile
import time

from netec_p4.bmv2 import bmv2_switch, p4tools
from netec_p4.control import netec_control as nc
from netec_p4.model import gf256
from netec_p4.model import netec_model as nm

VIP, VIP_PORT = "198.18.0.100", 40000
READER = ("198.18.0.9", 5555)
BATCH = 16  # stripes in flight (under the S / 2 the switch exposes)
# Both v1model programs recirculate through this port's queue, up to five passes a DATA
# packet: a burst's passes overflow BMv2's default depth (64), and a pass lost there stalls
# its stripe (the data plane never answers one short of a packet), so it is deepened to hold
# a batch's passes, as a Tofino's recirculation path would; so is the reader's port's, which
# the baseline's bursts (k packets a stripe, all to the reader) overflowed alike.
RECIRC_PORT = 68
READER_SWITCH_PORT = 1
QUEUE_DEPTH = 1024
P = 64  # the payload netec.p4 is compiled for
XOR_P = 256  # ... and netec_xor.p4


def ip_tcp(src, sport, dst, dport, seq, payload, flags=0x18):
    """An IPv4/TCP segment with valid checksums (bytes); PSH+ACK unless FLAGS."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 1, 5 << 4, flags, 65535, 0, 0)
    s_, d_ = socket.inet_aton(src), socket.inet_aton(dst)
    pseudo = s_ + d_ + struct.pack("!BBH", 0, 6, len(tcp) + len(payload))
    csum = nm.checksum(pseudo + tcp + payload)
    tcp = tcp[:16] + struct.pack("!H", csum) + tcp[18:]
    total = 20 + len(tcp) + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, 6, 0, s_, d_)
    ip = ip[:10] + struct.pack("!H", nm.checksum(ip)) + ip[12:]
    return ip + tcp + payload


def hosts(k):
    """The reader on switch port 1, survivor s's agent (198.18.1.s+1) on port s + 2."""
    h = {READER[0]: READER_SWITCH_PORT}
    h.update({agent(s): s + 2 for s in range(k)})
    return h


def agent(s):
    return "198.18.1.%d" % (s + 1)


def burst_rebuild(sw, k, m, stripes, program="netec"):
    """Rebuilds data unit 0 through switch SW (running PROGRAM, hosts(k) as its hosts) from k
    survivors, BATCH stripes of all k survivors' packets sent at once, then the reader's ACK.
    netec.p4: TCP segments of P bytes, multiplied by the switch; netec_xor.p4: datagrams of
    XOR_P bytes, each survivor's unit multiplied by its coefficient first. Returns (rebuilt
    byte-identical, seconds taken by the data)."""
    xor = program == "netec_xor"
    p = XOR_P if xor else P
    length = stripes * p
    units = gf256.random_units(k, m, length, seed=7)
    survivors = [u for u in range(k + m) if u != 0][:k]
    row = gf256.decode_rows(k, m, survivors, [0])[0]
    setup = nc.parse_setup({
        "version": nc.VERSION, "group": "bench", "k": k, "rows": 1, "payload": p, "length": length,
        "timeoutMs": 60000, "coefficients": [row], "transport": "udp" if xor else "tcp",
        "premultiplied": xor,
        "survivors": [{"sender": s, "agent": "%s:50300" % agent(s), "block": "b",
                       "unitLength": length, "token": ""} for s in range(k)]})
    secret = secrets.token_hex(16)
    sw.backend().add_task(0, 0, nc.task_entries(0, 0, setup, nc.Limits.of_program(program),
                                                (VIP, VIP_PORT), secret=secret))
    sw.queue_depth(RECIRC_PORT, QUEUE_DEPTH)
    sw.queue_depth(READER_SWITCH_PORT, QUEUE_DEPTH)

    def to_vip(src, sport, seq, payload):
        if xor:
            return ip_udp(src, sport, VIP, VIP_PORT, payload)
        return ip_tcp(src, sport, VIP, VIP_PORT, seq, payload)

    # the switch learns where RESULTs go: the reader's HELLO with the task's secret
    # (datagrams); its SYN, then that HELLO, without which its ACKs reach no survivor (TCP)
    hello = nm.Packet(nm.HELLO, 0, 0, nm.READER, 0, 0, 0, 0, nm.reader_hello(secret)).encode()
    if not xor:
        sw.send_ip(ip_tcp(READER[0], READER[1], VIP, VIP_PORT, 1000, b"", flags=0x02),
                   port=READER_SWITCH_PORT)
        if len(sw.receive(expect=k)) != k:
            raise RuntimeError("the reader's SYN did not reach every survivor")
    sw.send_ip(to_vip(READER[0], READER[1], 1001, hello), port=READER_SWITCH_PORT)
    if len(sw.receive(expect=k)) != k:
        raise RuntimeError("the reader's HELLO did not reach every survivor")
    frames = []
    for q in range(stripes):
        stripe = []
        for s in range(k):
            body = units[survivors[s]][q * p:(q + 1) * p]
            if xor:
                body = nm.premultiply(row[s], body)
            pkt = nm.Packet(nm.DATA, 0, 0, s, 0, q % 64, q, 0, body).encode()
            stripe.append((s + 2, to_vip(agent(s), 50300, 1 + q * len(pkt), pkt)))
        frames.append(stripe)
    return send_bursts(sw, frames, k, units[0], p, 28 if xor else 40,
                       lambda ack: to_vip(READER[0], READER[1], 2000, ack))


def send_bursts(sw, frames, k, unit, payload, headers, ack_of):
    """Sends FRAMES (per stripe, (port, IPv4 bytes) of each survivor) BATCH stripes at a time,
    collects the RESULTs (their NetEC packet HEADERS bytes after the IPv4 header's start) and
    ACKs each batch (ACK_OF wraps the reader's NetEC ACK); returns (every stripe equal to
    UNIT's, seconds taken)."""
    rebuilt = {}
    t = time.monotonic()
    for first in range(0, len(frames), BATCH):
        batch = frames[first:first + BATCH]
        for stripe in batch:
            for port, raw in stripe:
                sw.send_ip(raw, port=port)
        for _port, frame in sw.receive(expect=len(batch), timeout=60, settle=0):
            r = nm.Packet.decode(frame[14 + headers:])
            rebuilt[r.seq] = r.payload
        ack = nm.Packet(nm.ACK, 0, 0, nm.READER, 0, 0, first + len(batch), 32).encode()
        sw.send_ip(ack_of(ack), port=READER_SWITCH_PORT)
        if len(sw.receive(expect=k, timeout=60, settle=0)) != k:
            raise RuntimeError("the reader's ACK after stripe %d did not reach every survivor"
                               % (first + len(batch)))
    took = time.monotonic() - t
    bad = [q for q in range(len(frames))
           if rebuilt.get(q) != unit[q * payload:(q + 1) * payload]]
    if bad:
        print("wrong or missing stripes: %s" % bad[:20], file=sys.stderr)
    return not bad, took


def ip_udp(src, sport, dst, dport, payload):
    """An IPv4/UDP datagram (bytes), UDP checksum 0 (none), as the datagram program sends."""
    s_, d_ = socket.inet_aton(src), socket.inet_aton(dst)
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(payload), 0, 0, 64, 17, 0, s_, d_)
    ip = ip[:10] + struct.pack("!H", nm.checksum(ip)) + ip[12:]
    return ip + udp + payload


def burst_forward(sw, k, stripes, program="netec"):
    """The baseline: as many packets of the same size, forwarded by l3_forward, in the same
    bursts. Returns the seconds taken."""
    if program == "netec_xor":
        # 304-byte frames: a burst of more than 32 to one port loses packets in BMv2's queues,
        # so these go BATCH at a time (the aggregation's bursts put BATCH RESULTs on that port)
        plain = [(2, ip_udp(agent(0), 50301, READER[0], READER[1], bytes(20 + XOR_P)))]
        burst = BATCH
    else:
        plain = [(s + 2, ip_tcp(agent(s), 50301, READER[0], READER[1], 1, bytes(20 + P)))
                 for s in range(k)]
        burst = BATCH * k
    packets = plain * (stripes * k // len(plain))
    t = time.monotonic()
    for first in range(0, len(packets), burst):
        chunk = packets[first:first + burst]
        for port, raw in chunk:
            sw.send_ip(raw, port=port)
        sw.receive(expect=len(chunk), timeout=60, settle=0)
    return time.monotonic() - t


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the switch is cleaned up
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--m", type=int, default=3)
    ap.add_argument("--stripes", type=int, default=512)
    ap.add_argument("--program", choices=p4tools.PROGRAMS, default="netec")
    a = ap.parse_args(argv)
    xor = a.program == "netec_xor"
    reason = p4tools.skip_reason("p4c-bm2-ss", "simple_switch")
    if reason:
        print("SKIP: " + reason)
        return 0
    if os.geteuid() != 0:
        print("SKIP: BMv2's ports are veth pairs in a network namespace: needs root")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        took, _, json_path = p4tools.compile_bmv2(tmp, a.program)
        with bmv2_switch.Bmv2Switch(json_path, hosts(a.k), program=a.program) as sw:
            ok, netec_s = burst_rebuild(sw, a.k, a.m, a.stripes, a.program)
            plain_s = burst_forward(sw, a.k, a.stripes, a.program)
    n = a.stripes * a.k
    print("| BMv2 simple_switch, %s, RS(%d,%d), P = %d B, %d stripes | packets/s | ratio |" % (
        a.program, a.k, a.m, XOR_P if xor else P, a.stripes))
    print("|---|---|---|")
    print("| plain IPv4 forwarding (l3_forward), same packets | %.0f | 1.00 |" % (n / plain_s))
    print("| NetEC aggregation (%s passes each, %d RESULTs) | %.0f | %.2f |" % (
        "3" if xor else "5", a.stripes, n / netec_s, plain_s / netec_s))
    print("p4c-bm2-ss compile: %.1f s; rebuilt unit %s" % (
        took, "byte-identical" if ok else "WRONG"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
