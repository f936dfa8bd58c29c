"""The TCP proxy scenario of the TCP program (p4src/*/netec.p4): a reader and three survivors
through the control endpoint and a data plane, every assertion on the packets that leave the
switch and on its registers. switch-p4/tests runs it on the pipeline model,
src/test/python/test_p4_toolchain.py on BMv2. Needs scapy."""

import json
import socket
import struct
import threading

from scapy.layers.inet import IP, TCP

from netec_p4.control import netec_control as nc
from netec_p4.model import gf256
from netec_p4.model import netec_model as nm
from netec_p4.model import pipeline as pl

AGENTS = ["198.18.1.1", "198.18.1.2", "198.18.1.3", "198.18.1.4", "198.18.1.5", "198.18.1.6"]
READER = ("198.18.0.9", 5555)
STRANGER = ("198.18.0.66", 4444)  # a host that did not set the task up


def setup_request(k=3, m=2, erased=(1,), length=200, payload=64, coeff=None):
    survivors_idx = [i for i in range(k + m) if i not in erased][:k]
    rows = coeff or gf256.decode_rows(k, m, survivors_idx, list(erased))
    return {"op": "setup", "version": nc.VERSION, "group": "g", "k": k, "rows": len(rows),
            "payload": payload, "length": length, "timeoutMs": 5000,
            "survivors": [{"sender": s, "agent": "%s:50300" % AGENTS[s], "block": "b%d" % s,
                           "unitLength": length, "token": ""} for s in range(k)],
            "coefficients": rows}, survivors_idx


class Endpoint:
    """The control plane on a real socket, as a reader meets it."""

    def __init__(self, limits=None, pipe=None, backend=None):
        """The pipeline model by default; or PIPE (process, register_read) programmed through
        BACKEND (BMv2: test_p4_toolchain.py)."""
        self.pipe = pipe if pipe is not None else pl.ProxyPipeline()
        self.cp = nc.ControlPlane(backend or nc.ModelBackend(self.pipe), limits or nc.Limits(),
                                  "198.18.0.100",
                                  agent_networks=nc.parse_networks("198.18.0.0/15"))
        self.srv = self.cp.serve("127.0.0.1", 0)
        threading.Thread(target=self.cp.accept_loop, args=(self.srv,), daemon=True).start()
        self.sock = socket.create_connection(self.srv.getsockname())

    def ask(self, obj):
        body = json.dumps(obj).encode() if not isinstance(obj, bytes) else obj
        self.sock.sendall(struct.pack("!I", len(body)) + body)
        n = struct.unpack("!I", self._read(4))[0]
        return json.loads(self._read(n))

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            assert chunk, "control plane closed the connection"
            buf += chunk
        return buf

    def close(self):
        self.cp.stop()
        self.sock.close()
        self.srv.close()


def verdict_count(ep):
    """Reader segments refused for want of the task's secret (V_NO_SECRET, netec_logic.p4):
    the model's counter, or the program's verdicts cell through the backend."""
    if isinstance(ep.pipe, pl.Pipeline):
        return ep.pipe.counters["refused_no_secret"]
    return ep.cp.backend.counter_read("verdicts", 0)


def tcp_ok(p):
    fresh = p.copy()
    del fresh[TCP].chksum
    del fresh[IP].chksum
    return IP(bytes(fresh))[TCP].chksum == p[TCP].chksum


def proxy_scenario(ep):
    """The TCP proxy end to end through EP's pipeline (the model in switch-p4/tests, BMv2 in
    test_p4_toolchain.py): every assertion is on packets that leave the switch and on its
    registers."""
    k, m, length, P = 3, 2, 200, 64
    req, surv = setup_request(k, m, (1,), length, P)
    a = ep.ask(req)
    task = a["task"]
    vip_host, vip_port = a["vip"].split(":")
    vip_port = int(vip_port)
    vip_isn = nc.ControlPlane.vip_isn(task)
    pipe = ep.pipe
    model = isinstance(pipe, pl.Pipeline)

    # other traffic is forwarded untouched, even with a payload shaped like a NetEC header
    other = IP(src=AGENTS[0], dst=READER[0]) / TCP(sport=50301, dport=READER[1], flags="PA",
                                                   seq=5, ack=5) / bytes(40)
    (p,) = pipe.process(other)
    assert (p[IP].dst, p[TCP].dport, bytes(p[TCP].payload)) == (READER[0], READER[1],
                                                                 bytes(40))

    # SYN from the reader: one copy per survivor, from the VIP, the reader's ISN kept
    syn = IP(src=READER[0], dst=vip_host) / TCP(sport=READER[1], dport=vip_port, flags="S",
                                                seq=1000)
    out = pipe.process(syn)
    assert sorted((p[IP].dst, p[TCP].dport) for p in out) == [(h, 50300) for h in AGENTS[:3]]
    assert all(p[IP].src == vip_host and p[TCP].sport == vip_port and p[TCP].seq == 1000
               and tcp_ok(p) for p in out)

    # SYN-ACKs with unrelated ISNs (one wraps): only the last reaches the reader, as the VIP's
    isns = [7000, 9000000, 0xFFFFFF00]
    for s, isn in enumerate(isns):
        sa = IP(src=AGENTS[s], dst=vip_host) / TCP(sport=50300, dport=vip_port, flags="SA",
                                                   seq=isn, ack=1001)
        got = pipe.process(sa)
        if s < k - 1:
            assert got == []
        else:
            (p,) = got
            assert (p[IP].src, p[TCP].sport, p[IP].dst, p[TCP].dport) == (
                vip_host, vip_port, READER[0], READER[1])
            assert p[TCP].seq == vip_isn and p[TCP].ack == 1001 and tcp_ok(p)

    # Before the reader proves itself with its HELLO's secret, nothing with a payload reaches
    # a survivor: not a HELLO without the secret, nor one with another task's or a wrong one
    # (from the reader or a stranger), nor a NetEC ACK; each is counted
    def reader_seg(body, src=READER, flags="PA"):
        return IP(src=src[0], dst=vip_host) / TCP(sport=src[1], dport=vip_port, flags=flags,
                                                  seq=1001, ack=vip_isn + 1) / body

    def hello_of(payload):
        return nm.Packet(nm.HELLO, task, a["slotArray"], nm.READER, 0, 0, 0, 0,
                         payload).encode()

    stranger = STRANGER
    wrong = "%032x" % (int(a["secret"], 16) ^ 1)
    # a stranger holding the secret of a task of its own, naming that task, at this VIP
    other = ep.ask(setup_request(k, m, (1,), length, P)[0])
    assert other["ok"] and other["task"] != task
    theirs = nm.Packet(nm.HELLO, other["task"], other["slotArray"], nm.READER, 0, 0, 0, 0,
                       nm.reader_hello(other["secret"], length=length)).encode()
    short = bytearray(hello_of(nm.reader_hello(a["secret"], length=length)))
    short[14:16] = (nm.HELLO_SECRET_END - 1).to_bytes(2, "big")  # says it holds no secret
    short[16:18] = b"\0\0"
    short[16:18] = nm.checksum(bytes(short)).to_bytes(2, "big")
    refused = [hello_of(nm.reader_hello(wrong, length=length)),
               hello_of(json.dumps({"role": "reader"}).encode()),
               hello_of(nm.reader_hello(a["secret"])[:nm.HELLO_SECRET_END - 1]),
               bytes(short), theirs,
               nm.Packet(nm.ACK, task, a["slotArray"], nm.READER, 0, 0, 0, 1000).encode()]
    before = verdict_count(ep)
    for n, body in enumerate(refused):
        for src in (READER, stranger):
            assert pipe.process(reader_seg(body, src)) == [], "refused %d from %s" % (n, src)
    # a SYN carrying data before the proof is refused too, and binds nothing
    assert pipe.process(reader_seg(b"x" * 30, stranger, "S")) == []
    assert pipe.register_read("reader_addr", task) == pl._ip(READER[0])
    assert verdict_count(ep) == before + 2 * len(refused) + 1
    # a fragment to the VIP is never judged in pieces: dropped, whatever it carries
    frag = IP(src=READER[0], dst=vip_host, flags="MF") / TCP(
        sport=READER[1], dport=vip_port, flags="PA", seq=1001, ack=vip_isn + 1)
    assert pipe.process(frag) == []
    # ... while a SYN still (re)binds the VIP: a stranger's takes it for now
    assert len(pipe.process(reader_seg(b"", stranger, "S"))) == k
    assert pipe.register_read("reader_addr", task) == pl._ip(stranger[0])

    # the reader's ACK + HELLO with its secret: each survivor gets its own ACK number and
    # sender number, and the VIP is bound to the HELLO's source for good
    hello = hello_of(nm.reader_hello(a["secret"], length=length, payload=P))
    seg = reader_seg(hello)
    out = pipe.process(seg)
    assert len(out) == k
    assert (pipe.register_read("reader_addr", task),
            pipe.register_read("reader_port", task)) == (pl._ip(READER[0]), READER[1])
    assert pipe.register_read("reader_proven", task) == 1
    assert pipe.process(reader_seg(b"", stranger, "S")) == []  # no SYN rebinds it now
    # nor a HELLO with its secret from elsewhere (a replay), and one without it never passes
    before = verdict_count(ep)
    assert len(pipe.process(reader_seg(hello, stranger))) == k
    for body in (hello_of(nm.reader_hello(wrong, length=length)), theirs):
        assert pipe.process(reader_seg(body, stranger)) == []
    assert verdict_count(ep) == before + 2
    assert (pipe.register_read("reader_addr", task),
            pipe.register_read("reader_port", task)) == (pl._ip(READER[0]), READER[1])
    for p in out:
        s = AGENTS.index(p[IP].dst)
        assert p[TCP].ack == (isns[s] + 1) & 0xFFFFFFFF and p[TCP].seq == 1001 and tcp_ok(p)
        h = nm.Packet.decode(bytes(p[TCP].payload))
        assert h.type == nm.HELLO and h.sender == s

    # DATA from every survivor, in their own sequence spaces: one RESULT per stripe, in the
    # VIP's space, carrying the erased unit
    units = gf256.random_units(k, m, length, 5)
    stripes = (length + P - 1) // P
    results = {}
    for q in range(stripes):
        for s in range(k):
            body = units[surv[s]][q * P:(q + 1) * P]
            d = nm.Packet(nm.DATA, task, a["slotArray"], s, 0, q % pl.SLOTS, q, 0, body).encode()
            p = IP(src=AGENTS[s], dst=vip_host) / TCP(
                sport=50300, dport=vip_port, flags="PA",
                seq=(isns[s] + 1 + q * (nm.HEADER + P)) & 0xFFFFFFFF, ack=1001 + len(hello)) / d
            for o in pipe.process(p):
                assert o[IP].dst == READER[0] and tcp_ok(o)
                assert o[TCP].seq == vip_isn + 1 + q * (nm.HEADER + P)
                r = nm.Packet.decode(bytes(o[TCP].payload))
                assert r.type == nm.RESULT and r.seq == q
                results[q] = r.payload
    assert b"".join(results[q] for q in range(stripes)) == units[1]
    if model:
        assert pipe.counters["completed"] == stripes

    # EBSN: the reader's ACK reaches every survivor with its window lowered to what is left
    ack = nm.Packet(nm.ACK, task, a["slotArray"], nm.READER, 0, 0, 2, 1000).encode()
    seg = IP(src=READER[0], dst=vip_host) / TCP(sport=READER[1], dport=vip_port, flags="PA",
                                                seq=1001 + len(hello), ack=vip_isn + 1) / ack
    out = pipe.process(seg)
    windows = {nm.Packet.decode(bytes(p[TCP].payload)).window for p in out}
    # every stripe is complete, so no slot holds partial sums: the whole I (version 1 counted
    # the span maxStarted + 1 - ackSeq and said I - (stripes - 2))
    assert windows == {pl.SLOTS // 2}
    assert len(out) == k
    assert pipe.register_read("ack_seq", task) == 2

    # a corrupted DATA segment is dropped, never aggregated
    d = bytearray(nm.Packet(nm.DATA, task, a["slotArray"], 0, 0, 3, 3, 0, bytes(8)).encode())
    p = IP(src=AGENTS[0], dst=vip_host) / TCP(sport=50300, dport=vip_port, flags="PA",
                                              seq=1, ack=1) / bytes(d)
    p = IP(bytes(p))
    raw = bytearray(bytes(p))
    raw[-1] ^= 0x40
    if model:
        before = pipe.counters["dropped_malformed"]
    assert pipe.process(IP(bytes(raw))) == []
    if model:
        assert pipe.counters["dropped_malformed"] == before + 1
    # ... and so is a DATA packet whose NetEC checksum fails inside a valid TCP segment: the
    # stripe (sent again) completes on its sender's good copy, with the right bytes
    def data(s, corrupt=False):
        d = bytearray(nm.Packet(nm.DATA, task, a["slotArray"], s, 0, 3, 3, 0,
                                units[surv[s]][3 * P:4 * P]).encode())
        if corrupt:
            d[-1] ^= 0x01
        return IP(src=AGENTS[s], dst=vip_host) / TCP(sport=50300, dport=vip_port, flags="PA",
                                                     seq=1, ack=1) / bytes(d)
    assert pipe.process(data(0, corrupt=True)) == []
    if model:
        assert pipe.counters["dropped_malformed"] == before + 2
    assert pipe.process(data(1)) == [] and pipe.process(data(2)) == []
    (o,) = pipe.process(data(0))
    r = nm.Packet.decode(bytes(o[TCP].payload))
    assert r.type == nm.RESULT and r.seq == 3 and r.payload == units[1][3 * P:4 * P]
