"""The P4 programs meet their compilers, and the v1model twin runs on BMv2 (simple_switch):
filled by the real control plane through the thrift backend, it replays every one-row shared
vector (every emitted packet byte for byte, every drop a drop) and the TCP proxy scenario that
the pipeline model runs (netec_p4.testing.proxy.proxy_scenario).

Needs the P4 toolchain (P4TOOLS or PATH: p4test, p4c-bm2-ss, simple_switch); without it every
test here is skipped with one line naming what is missing, also in CI (README.md, P4
toolchain). With the tools, running BMv2 needs root (its ports are veth pairs in a namespace
of the test's own).
"""

import functools
import glob
import json
import os
import random
import re
import secrets

import pytest

from netec_p4.bmv2 import p4tools, resources
from netec_p4.control import netec_control as nc
from netec_p4.model import gf256
from netec_p4.model import netec_model as nm
from netec_p4.model.pipeline import PASS_BYTES
from netec_p4.testing.vectors import ONE_ROW, readdressed, setup_of

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")

scapy_inet = pytest.importorskip("scapy.layers.inet")
IP, TCP = scapy_inet.IP, scapy_inet.TCP

from netec_p4.bmv2 import bench, bmv2_switch  # noqa: E402
from netec_p4.testing import proxy  # noqa: E402

VIP, READER = bench.VIP, bench.READER
AGENT_PORT = 50300
# Verdicts the program counts in its verdicts counter (p4src/include/netec_logic.p4); a
# MALFORMED packet fails a checksum and is dropped before it has a verdict.
COUNTED = {"MISMATCH": 1, "STALE": 2, "TOO_FAR": 3, "DUPLICATE": 4, "AGGREGATED": 5,
           "COMPLETED": 6}


def requires(*tools):
    reason = p4tools.skip_reason(*tools)
    if reason:
        pytest.skip(reason)


def needs_bmv2():
    requires("p4c-bm2-ss", "simple_switch")
    if os.geteuid() != 0:
        msg = "BMv2's ports are veth pairs in a network namespace: needs root"
        if os.environ.get("NETEC_REQUIRE_ENV") == "1":
            pytest.fail(msg)
        pytest.skip(msg)


@pytest.fixture(scope="module")
def bmv2_json(tmp_path_factory):
    requires("p4c-bm2-ss")
    out = tmp_path_factory.mktemp("p4build")
    _, text, path = p4tools.compile_bmv2(str(out))
    assert warnings_by_kind(text) == EXPLAINED["p4c-bm2-ss"], text
    return path


# Every warning the compilers print, by kind, with where it is explained: a new one fails.
# v1model/netec.p4 does not use READER_LEARN (v1model/common/reader_address.p4), the op of
# ReaderAddress that only the datagram program (netec_xor.p4) applies
EXPLAINED = {
    "p4test v1model": {"unused": 1},
    "p4test tna": {"uninitialized-out-param": 2},  # tna/netec.p4, above both parsers
    # v1model/netec.p4: at recirculate_preserving_field_list, and READER_LEARN
    "p4c-bm2-ss": {"invalid": 1, "unused": 1},
    # v1model/netec_xor.p4: the same at its recirculation, and the shared includes' TCP
    # constants and the TCP program's admission controls, which it does not use
    "p4c-bm2-ss netec_xor": {"invalid": 1, "unused": 5},
}


def warnings_by_kind(text):
    kinds = {}
    for kind in re.findall(r"\[--Wwarn=([\w-]+)\] warning", text):
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def test_p4test_accepts_both_programs():
    requires("p4test")
    _, text = p4tools.compile_p4test_v1model()
    assert warnings_by_kind(text) == EXPLAINED["p4test v1model"], text
    _, text = p4tools.compile_p4test_tna()
    assert warnings_by_kind(text) == EXPLAINED["p4test tna"], text


@pytest.mark.parametrize("program", p4tools.PROGRAMS)
def test_p4c_barefoot_compiles_the_tna_program_for_tofino1(tmp_path, program):
    requires("p4c-barefoot", "bfas")
    p4tools.compile_tofino(str(tmp_path), program)
    # its own resource report, as resources.py tabulates it for switch-p4/README.md
    report = resources.load(str(tmp_path))
    assert "stages used" in resources.render(*report)
    stages = len(resources.stage_rows(report[0]))
    assert stages <= report[0]["resources"]["mau"]["nStages"] == 12, "%d stages" % stages
    assert glob.glob(str(tmp_path / "**" / "tofino.bin"), recursive=True), \
        "bfas wrote no Tofino binary"


def test_p4c_bm2_ss_compiles_the_twin(bmv2_json):
    with open(bmv2_json) as f:
        program = json.load(f)
    tables = {t["name"] for p in program["pipelines"] for t in p["tables"]}
    # one log and one exp table per byte of the part a sum pass multiplies, each applied
    # from one place (MultiplyPass has one call site; each sum pass rotates the payload)
    assert sum(1 for t in tables if t.endswith("exp_table")) == PASS_BYTES
    assert sum(1 for t in tables if t.endswith("log_table")) == PASS_BYTES
    # each function a control of its own, applied once: its instance name before its tables
    assert "NetecIngress.classify.sender_coeff" in tables and "NetecEgress.replica" in tables
    assert "NetecIngress.forward.l3_to_reader" in tables
    registers = {r["name"] for r in program["register_arrays"]}
    assert {"NetecIngress.tracker.slot_seq", "NetecIngress.acks.ack_seq",
            "NetecEgress.isn_deltas.isn_delta"} <= registers


VECTORS = os.path.join(ROOT, "src", "test", "vectors")


def moved(hexwire, v, task, array):
    """A packet (hex) of vector V re-addressed to another task and slot array, as bytes (as
    it is where they are the vector's own: a foreign task's packet stays foreign)."""
    if (task, array) == (v["task"], v["slotArray"]):
        return bytes.fromhex(hexwire)
    return readdressed(hexwire, task, array)


def source(frm, wire, k):
    """Where a vector's packet comes from: the reader, or the survivor its sender field names
    (survivor 0's connection for a packet naming none)."""
    if frm == "reader":
        return READER
    sender = wire[4] if len(wire) > 4 and wire[4] < k else 0
    return bench.agent(sender), AGENT_PORT


class Replay:
    """One vector's events through a running BMv2, its packets re-addressed to TASK and slot
    array ARRAY (as test_pipeline_model does for two tasks at once): installs the task through
    the control plane's backend, connects the reader, then checks each event's packets out,
    drops and verdict count."""

    def __init__(self, sw, v, task, array):
        self.sw, self.v, self.task, self.array = sw, v, task, array
        self.k = k = v["k"]
        self.vip_port = 40000 + task
        self.backend = sw.backend()
        limits = nc.Limits(slots=v["slots"], payload=v["payload"])
        secret = secrets.token_hex(16)
        self.backend.add_task(task, array, nc.task_entries(task, array, setup_of(v), limits,
                                                           (VIP, self.vip_port),
                                                           secret=secret))
        # the reader connects: its SYN reaches every survivor (and the switch learns it), and
        # its HELLO with the task's secret proves it (until then its ACKs would be refused)
        syn = IP(src=READER[0], dst=VIP) / TCP(sport=READER[1], dport=self.vip_port,
                                               flags="S", seq=1000)
        assert len(sw.process(syn, expect=k)) == k
        hello = nm.Packet(nm.HELLO, task, array, nm.READER, 0, 0, 0, 0,
                          nm.reader_hello(secret)).encode()
        seg = IP(src=READER[0], dst=VIP) / TCP(sport=READER[1], dport=self.vip_port,
                                               flags="PA", seq=1, ack=1) / hello
        assert len(sw.process(seg, expect=k)) == k
        self.agents = sorted(bench.agent(s) for s in range(k))
        self.rebuilt, self.seqs = {}, {READER: 1 + len(hello)}

    def step(self, n):
        e, k, where = self.v["events"][n], self.k, "%s event %d" % (self.v["name"], n)
        frm = e["from"]
        wire = moved(e["packet"], self.v, self.task, self.array)
        emit = [moved(x, self.v, self.task, self.array).hex() for x in e["emit"]]
        src = source(frm, wire, k)
        seq = self.seqs.get(src, 1)  # each connection's bytes follow on
        self.seqs[src] = seq + len(wire)
        verdict = e.get("verdict")
        counted = COUNTED.get(verdict)
        before = self.backend.counter_read("verdicts", counted) if counted else None
        seg = IP(src=src[0], dst=VIP) / TCP(sport=src[1], dport=self.vip_port, flags="PA",
                                            seq=seq, ack=1) / wire
        out = self.sw.process(seg, expect=k * len(emit) if frm == "reader" else len(emit))
        assert all(isinstance(o, IP) and proxy.tcp_ok(o) for o in out), where
        got = [bytes(o[TCP].payload).hex() for o in out]
        if frm == "reader":  # one copy of the ACK per survivor
            if emit:
                assert sorted(o[IP].dst for o in out) == self.agents, where
            assert got == [x for x in emit for _ in range(k)], where
        else:
            assert got == emit, "%s (%s)" % (where, verdict)
            assert all(o[IP].dst == READER[0] for o in out), where
        if counted:
            assert self.backend.counter_read("verdicts", counted) == before + 1, \
                "%s: not counted as %s" % (where, verdict)
        for x in got:
            r = nm.Packet.decode(bytes.fromhex(x))
            if r.type == nm.RESULT:
                self.rebuilt.setdefault(r.seq, r.payload)

    def check_rebuilt(self):
        stripes = (self.v["length"] + self.v["payload"] - 1) // self.v["payload"]
        got = nm.stream_of((self.rebuilt[q] for q in range(stripes)), self.v["length"])
        assert got.hex() == self.v["erasedUnits"][0], self.v["name"]


def load(path):
    with open(path) as f:
        return json.load(f)


@pytest.mark.parametrize("path", ONE_ROW, ids=[os.path.basename(v) for v in ONE_ROW])
def test_bmv2_reproduces_vector(bmv2_json, path):
    needs_bmv2()
    v = load(path)
    with bmv2_switch.Bmv2Switch(bmv2_json, bench.hosts(v["k"])) as sw:
        r = Replay(sw, v, v["task"], v["slotArray"])
        for n in range(len(v["events"])):
            r.step(n)
        r.check_rebuilt()


def test_bmv2_two_tasks_interleaved(bmv2_json):
    """Two one-row vectors at once, events interleaved, in other task ids and slot arrays:
    each task's packets come out exactly as when it runs alone."""
    needs_bmv2()
    vs = [load(os.path.join(VECTORS, n)) for n in ("rs32-in-order.json",
                                                   "rs63-one-row-faults.json")]
    with bmv2_switch.Bmv2Switch(bmv2_json, bench.hosts(6)) as sw:
        interleave([Replay(sw, vs[0], 3, 1), Replay(sw, vs[1], 9, 17)])


def interleave(replays):
    """Steps the REPLAYS' events in turn, then checks each rebuilt its unit."""
    for n in range(max(len(r.v["events"]) for r in replays)):
        for r in replays:
            if n < len(r.v["events"]):
                r.step(n)
    for r in replays:
        r.check_rebuilt()


def test_bmv2_refuses_a_pass_header_from_a_front_port(bmv2_json):
    """A survivor forges the pass header (ethertype 0x88B5, k = 1, reset) in front of its
    stripe's first DATA packet: honoured, it would skip admission and send the reader a
    RESULT of one packet's product. Only the recirculation port may bring one: nothing comes
    out, and the task then rebuilds its unit byte for byte."""
    needs_bmv2()
    v = load(os.path.join(VECTORS, "rs32-in-order.json"))
    with bmv2_switch.Bmv2Switch(bmv2_json, bench.hosts(v["k"])) as sw:
        r = Replay(sw, v, v["task"], v["slotArray"])
        first = next(e for e in v["events"] if e["from"] != "reader")
        wire = bytes.fromhex(first["packet"])
        src = source(first["from"], wire, r.k)
        seg = IP(src=src[0], dst=VIP) / TCP(sport=src[1], dport=r.vip_port, flags="PA",
                                            seq=1, ack=1) / wire
        forged = bytes([0, 1, 1])  # k - 1 = 0 (every packet its stripe), reset, starts
        port = sw.hosts[src[0]]
        sw.send(port, bmv2_switch.SWITCH_MAC + bmv2_switch.host_mac(port) + b"\x88\xb5"
                + forged + bytes(seg))
        assert sw.receive(expect=0, timeout=1.0) == [], "a forged second pass came out"
        for n in range(len(v["events"])):
            r.step(n)
        r.check_rebuilt()


def test_bmv2_drops_a_front_ports_packet_naming_a_sum_pass(bmv2_json):
    """A sum pass is told by the NetEC header's reserved field (i + 1 in sum pass i). A
    survivor sends its stripe's packet naming the last sum pass, its checksum made valid, k - 1
    times: counted, it would complete the stripe short. From a front port it is a first pass
    with reserved bytes: dropped as a mismatch each time, and the task then rebuilds its unit
    byte for byte."""
    needs_bmv2()
    v = load(os.path.join(VECTORS, "rs32-in-order.json"))
    with bmv2_switch.Bmv2Switch(bmv2_json, bench.hosts(v["k"])) as sw:
        r = Replay(sw, v, v["task"], v["slotArray"])
        first = next(e for e in v["events"] if e["from"] != "reader")
        wire = bytearray(bytes.fromhex(first["packet"]))
        # the NetEC header's reserved field (bytes 18-19): sum pass 3, the last for a 64-byte
        # payload; then its checksum (bytes 16-17) made valid again
        wire[18:20] = (4).to_bytes(2, "big")
        wire[16:18] = bytes(2)
        c = nm.checksum(bytes(wire))
        wire[16:18] = (c or 0xFFFF).to_bytes(2, "big")
        src = source(first["from"], bytes(wire), r.k)
        before = r.backend.counter_read("verdicts", COUNTED["MISMATCH"])
        for _ in range(r.k - 1):
            seg = IP(src=src[0], dst=VIP) / TCP(sport=src[1], dport=r.vip_port, flags="PA",
                                                seq=1, ack=1) / bytes(wire)
            assert sw.process(seg, expect=0) == [], "a forged sum pass came out"
        assert r.backend.counter_read("verdicts", COUNTED["MISMATCH"]) == before + r.k - 1
        for n in range(len(v["events"])):
            r.step(n)
        r.check_rebuilt()


def test_bmv2_rebuilds_a_unit_from_bursts(bmv2_json):
    """All k survivors' packets of 16 stripes at once, 128 stripes: what a real task sends.
    (Found here: with second passes out of the order of first passes, stripes came out wrong;
    the program recirculates through one port since.)"""
    needs_bmv2()
    with bmv2_switch.Bmv2Switch(bmv2_json, bench.hosts(6)) as sw:
        ok, _ = bench.burst_rebuild(sw, 6, 3, 128)
    assert ok, "the unit rebuilt through BMv2 differs from the erased one"


def test_bmv2_tcp_proxy(bmv2_json):
    needs_bmv2()
    h = {READER[0]: 1}
    for i, a in enumerate(proxy.AGENTS):
        h[a] = i + 2
    h[proxy.STRANGER[0]] = len(h) + 1
    with bmv2_switch.Bmv2Switch(bmv2_json, h) as sw:
        ep = proxy.Endpoint(pipe=sw, backend=sw.backend())
        try:
            proxy.proxy_scenario(ep)
        finally:
            ep.close()


# ---- the datagram XOR program (p4src/*/netec_xor.p4) ---------------------------------------

UDP = scapy_inet.UDP
XOR = nc.Limits.of_program("netec_xor")
XOR_VECTORS = sorted(p for p, v in ((p, load(p)) for p in glob.glob(os.path.join(VECTORS,
                                                                                  "*.json")))
                     if v["premultiplied"] and v["payload"] == XOR.payload and v["rows"] == 1)
# its verdicts counter: stale and too far are one verdict there (V_OUTSIDE)
XOR_NO_SECRET = 0  # V_NO_SECRET: a reader HELLO without its task's secret
XOR_COUNTED = {"MISMATCH": 1, "STALE": 7, "TOO_FAR": 7, "DUPLICATE": 4, "AGGREGATED": 5,
               "COMPLETED": 6}


@pytest.fixture(scope="module")
def xor_json(tmp_path_factory):
    requires("p4c-bm2-ss")
    out = tmp_path_factory.mktemp("p4build-xor")
    _, text, path = p4tools.compile_bmv2(str(out), "netec_xor")
    assert warnings_by_kind(text) == EXPLAINED["p4c-bm2-ss netec_xor"], text
    return path


class DatagramReplay:
    """One pre-multiplied vector through BMv2 running netec_xor, each NetEC packet alone in a
    UDP datagram (docs/protocol.md "Datagram mode"): installs the task through the control
    plane's entries, sends the reader's HELLO (each survivor gets a copy with its sender
    number), then checks each event's datagrams out, drops and verdict counts."""

    def __init__(self, sw, v, task, array, hello=True):
        self.sw, self.v, self.task, self.array = sw, v, task, array
        self.k = k = v["k"]
        self.vip_port = 40000 + task
        self.backend = sw.backend()
        setup = setup_of(v)
        setup["transport"] = "udp"
        limits = nc.Limits.of_program("netec_xor", slots=v["slots"])
        self.secret = secrets.token_hex(16)
        self.backend.add_task(task, array, nc.task_entries(task, array, setup, limits,
                                                           (VIP, self.vip_port),
                                                           secret=self.secret))
        self.agents = sorted(bench.agent(s) for s in range(k))
        if hello:
            self.hello(nm.reader_hello(self.secret, length=v["length"]))

    def hello(self, payload, src=READER):
        """The reader's HELLO with PAYLOAD from SRC: each survivor gets a copy."""
        wire = nm.Packet(nm.HELLO, self.task, self.array, nm.READER, 0, 0, 0, 0,
                         payload).encode()
        self.check_copies(self.datagram(src, wire), wire, "the reader's HELLO")
        self.rebuilt = {}

    def datagram(self, src, wire, expect=0):
        pkt = IP(src=src[0], dst=VIP) / UDP(sport=src[1], dport=self.vip_port) / wire
        return self.sw.process(pkt, expect=expect) if expect else pkt

    def check_copies(self, pkt, wire, where):
        """The reader's packet PKT comes out once per survivor, from the VIP to its agent,
        naming it as sender, otherwise WIRE's fields and payload, its checksum valid."""
        out = self.sw.process(pkt, expect=self.k)
        assert sorted(o[IP].dst for o in out) == self.agents, where
        want = nm.Packet.decode(wire)
        for o in out:
            assert (o[IP].src, o[UDP].sport, o[UDP].dport) == (VIP, self.vip_port, AGENT_PORT)
            got = nm.Packet.decode(bytes(o[UDP].payload))  # checks the NetEC checksum
            s = self.agents.index(o[IP].dst)
            assert got.sender == s, where
            got.sender = want.sender
            assert got.encode() == want.encode(), where

    def step(self, n):
        e, k, where = self.v["events"][n], self.k, "%s event %d" % (self.v["name"], n)
        wire = moved(e["packet"], self.v, self.task, self.array)
        emit = [moved(x, self.v, self.task, self.array) for x in e["emit"]]
        src = source(e["from"], wire, k)
        if e["from"] == "reader":
            pkt = self.datagram(src, wire)
            if emit:
                self.check_copies(pkt, emit[0], where)
            else:
                assert self.sw.process(pkt) == [], where
            return
        counted = XOR_COUNTED.get(e.get("verdict"))
        before = self.backend.counter_read("verdicts", counted) if counted else None
        out = self.datagram(src, wire, expect=len(emit)) if emit else self.sw.process(
            self.datagram(src, wire))
        got = [bytes(o[UDP].payload) for o in out]
        assert [g.hex() for g in got] == [x.hex() for x in emit], "%s (%s)" % (
            where, e.get("verdict"))
        for o in out:
            assert (o[IP].src, o[UDP].sport) == (VIP, self.vip_port), where
            assert (o[IP].dst, o[UDP].dport) == READER, where
        if counted:
            assert self.backend.counter_read("verdicts", counted) == before + 1, \
                "%s: not counted as %s" % (where, e.get("verdict"))
        for g in got:
            r = nm.Packet.decode(g)
            if r.type == nm.RESULT:
                self.rebuilt.setdefault(r.seq, r.payload)

    check_rebuilt = Replay.check_rebuilt


def test_xor_vectors_exist():
    assert len(XOR_VECTORS) >= 2, "no pre-multiplied vector of %d bytes a packet" % XOR.payload


@pytest.mark.parametrize("path", XOR_VECTORS, ids=[os.path.basename(v) for v in XOR_VECTORS])
def test_bmv2_xor_reproduces_vector(xor_json, path):
    """Every pre-multiplied vector of the program's payload through BMv2, in datagrams: every
    RESULT byte for byte (three passes a packet, the halves swapped and swapped back), every
    drop a drop, every ACK copied to each survivor with its sender and EBSN window."""
    needs_bmv2()
    v = load(path)
    with bmv2_switch.Bmv2Switch(xor_json, bench.hosts(v["k"]), program="netec_xor") as sw:
        r = DatagramReplay(sw, v, v["task"], v["slotArray"])
        for n in range(len(v["events"])):
            r.step(n)
        r.check_rebuilt()


def test_bmv2_xor_two_tasks_interleaved(xor_json):
    needs_bmv2()
    vs = [load(p) for p in XOR_VECTORS[:2]]
    with bmv2_switch.Bmv2Switch(xor_json, bench.hosts(6), program="netec_xor") as sw:
        interleave([DatagramReplay(sw, vs[0], 3, 1), DatagramReplay(sw, vs[1], 9, 17)])


class XorStripes:
    """BMv2 running the datagram program with the RS(6,3) pre-multiplied vector's task set up,
    and stripes of random words sent to it by that task's survivors."""

    def __init__(self, xor_json, seed):
        needs_bmv2()
        self.v = next(load(p) for p in XOR_VECTORS if "rs63" in p)
        self.k = self.v["k"]
        self.sw = bmv2_switch.Bmv2Switch(xor_json, bench.hosts(self.k), program="netec_xor")
        self.rng = random.Random(seed)

    def __enter__(self):
        self.sw.__enter__()
        self.r = DatagramReplay(self.sw, self.v, self.v["task"], self.v["slotArray"])
        return self

    def __exit__(self, *exc):
        return self.sw.__exit__(*exc)

    def units(self):
        """One unit of random words a survivor, and their XOR (what the stripe's RESULT holds)."""
        units = [bytes(self.rng.randrange(256) for _ in range(self.v["payload"]))
                 for _ in range(self.k)]
        return units, bytes(functools.reduce(
            lambda a, b: bytes(x ^ y for x, y in zip(a, b)), units))

    def data(self, seq, sender, unit):
        """Survivor SENDER's DATA packet of stripe SEQ, in its datagram to the VIP."""
        wire = nm.Packet(nm.DATA, self.r.task, self.r.array, sender, 0, seq % self.v["slots"],
                         seq, 0, unit).encode()
        return self.r.datagram((bench.agent(sender), AGENT_PORT), wire)

    def send_stripe(self, seq, units):
        """Every survivor's packet of stripe SEQ; returns the one RESULT that must come out."""
        out = []
        for s in range(self.k):
            out += self.sw.process(self.data(seq, s, units[s]),
                                   expect=1 if s == self.k - 1 else 0)
        assert len(out) == 1, "stripe %d: %d packets out" % (seq, len(out))
        return nm.Packet.decode(bytes(out[0][UDP].payload))

    def completed(self):
        return self.r.backend.counter_read("verdicts", XOR_COUNTED["COMPLETED"])


def test_bmv2_xor_never_answers_a_stripe_that_lost_a_pass(xor_json):
    """A DATA packet lost inside the switch between its passes (BMv2 told to drop everything
    queued for the recirculation port while it passes) must leave its stripe unanswered, never
    answered without its words: a packet counts toward k only in its last pass. A stripe whose
    packets all make their passes is answered with the XOR of every survivor's words."""
    with XorStripes(xor_json, 7) as x:
        units, _ = x.units()
        done = x.completed()
        lost = 2
        for s in range(x.k):
            if s == lost:
                x.sw.queue_depth(RECIRC_PORT, 0)
                try:
                    assert x.sw.process(x.data(0, s, units[s])) == [], \
                        "sender %d's first pass" % s
                finally:
                    x.sw.queue_depth(RECIRC_PORT, 64)
            else:
                assert x.sw.process(x.data(0, s, units[s])) == [], \
                    "stripe 0 answered without sender %d" % lost
        # the survivor's retransmission is a duplicate: the stripe stays unanswered
        assert x.sw.process(x.data(0, lost, units[lost])) == [], \
            "stripe 0 answered after a retransmission"
        assert x.completed() == done
        # a stripe whose packets all pass is answered, with every survivor's words
        units, want = x.units()
        result = x.send_stripe(1, units)
        assert x.completed() == done + 1
        assert (result.type, result.seq, result.payload) == (nm.RESULT, 1, want)


def test_bmv2_xor_answers_again_a_stripe_whose_result_was_lost(xor_json):
    """A RESULT lost on its way to the reader: the reader ACKs nothing, the survivors send the
    stripe again, and the switch answers it again with the same words. Its last pass frees the
    slot (slot_seq), so the retransmissions start the stripe anew instead of being duplicates;
    on Tofino the release comes after the sum branch's other tables (netec_xor.p4)."""
    with XorStripes(xor_json, 11) as x:
        units, want = x.units()
        first = x.send_stripe(0, units)
        assert (first.type, first.seq, first.payload) == (nm.RESULT, 0, want)
        again = x.send_stripe(0, units)  # as if the first RESULT never reached the reader
        assert (again.type, again.seq, again.payload) == (nm.RESULT, 0, want)


RECIRC_PORT = 68  # both v1model programs recirculate through this port's queue


def test_bmv2_xor_refuses_a_pass_header_from_a_front_port(xor_json):
    """A survivor forges the pass header of a last sum pass (ethertype 0x88B6, complete) in
    front of its DATA packet: only the recirculation port may bring one, so nothing comes out."""
    needs_bmv2()
    v = load(XOR_VECTORS[0])
    with bmv2_switch.Bmv2Switch(xor_json, bench.hosts(v["k"]), program="netec_xor") as sw:
        r = DatagramReplay(sw, v, v["task"], v["slotArray"])
        first = next(e for e in v["events"] if e["from"] != "reader")
        wire = bytes.fromhex(first["packet"])
        src = source(first["from"], wire, r.k)
        port = sw.hosts[src[0]]
        sw.send(port, bmv2_switch.SWITCH_MAC + bmv2_switch.host_mac(port) + b"\x88\xb6"
                + bytes([1, 1]) + bytes(r.datagram(src, wire)))
        assert sw.receive(expect=0, timeout=1.0) == [], "a forged pass came out"
        for n in range(len(v["events"])):
            r.step(n)
        r.check_rebuilt()


def test_bmv2_xor_binds_only_a_hello_with_the_tasks_secret(xor_json):
    """docs/protocol.md "setup answer": the data plane binds a task's VIP to the first reader
    HELLO that carries its secret, and copies only that one to the survivors. A HELLO without
    a secret, with a wrong one, with another task's, or one digit short binds nothing, reaches
    no survivor and is counted (verdicts cell V_NO_SECRET); after them the reader's own HELLO
    binds, and the task is served to its address."""
    needs_bmv2()
    v = load(XOR_VECTORS[0])
    hosts = bench.hosts(v["k"])
    stranger = proxy.STRANGER
    hosts[stranger[0]] = max(hosts.values()) + 1
    with bmv2_switch.Bmv2Switch(xor_json, hosts, program="netec_xor") as sw:
        r = DatagramReplay(sw, v, v["task"], v["slotArray"], hello=False)
        other = DatagramReplay(sw, v, v["task"] + 1, v["slotArray"] + 1, hello=False)
        wrong = "%032x" % (int(r.secret, 16) ^ (1 << 64))
        refused = [json.dumps({"role": "reader"}).encode(),
                   nm.reader_hello(wrong, length=v["length"]),
                   nm.reader_hello(other.secret, length=v["length"]),
                   nm.reader_hello(r.secret)[:nm.HELLO_SECRET_END - 1]]
        before = r.backend.counter_read("verdicts", XOR_NO_SECRET)
        for n, payload in enumerate(refused):
            for src in (stranger, READER):
                wire = nm.Packet(nm.HELLO, r.task, r.array, nm.READER, 0, 0, 0, 0,
                                 payload).encode()
                assert sw.process(r.datagram(src, wire)) == [], "HELLO %d from %s" % (n, src)
        assert r.backend.counter_read("verdicts", XOR_NO_SECRET) == before + 2 * len(refused)
        assert sw.register_read("reader_addr", r.task) == 0, "bound without the secret"
        r.hello(nm.reader_hello(r.secret, length=v["length"]))
        assert sw.register_read("reader_addr", r.task) == nc.ip_int(READER[0])
        for n in range(len(v["events"])):
            r.step(n)
        r.check_rebuilt()


# ---- partial sums: two BMv2 switches, a child task's sum a survivor of its parent's ----------

CHILD_VIP, PARENT_VIP = VIP, "198.18.0.101"


class TwoLevels:
    """Two BMv2 switches running the datagram program (docs/protocol.md "Partial sums",
    datagrams): survivors 0 and 1 of an RS(4,2) repair stream to the child switch, 2 and 3 to
    the parent, whose third sender is the child's partial sum. Each switch in a namespace of
    its own, filled by a control plane of its own; the test carries each packet from the port
    it left to the switch it is addressed to, as a rack's uplink would."""

    K, M, ERASED = 4, 2, 3
    LENGTH = 5 * 256 + 100  # six stripes, the last short

    def __init__(self, xor_json):
        needs_bmv2()
        self.xor_json = xor_json

    def __enter__(self):
        k, m = self.K, self.M
        self.units = gf256.random_units(k, m, self.LENGTH, seed=23)
        self.survivors = [i for i in range(k + m) if i != self.ERASED][:k]  # 0 1 2 4
        row = gf256.decode_rows(k, m, self.survivors, [self.ERASED])[0]
        # what each survivor sends: its unit times its coefficient (pre-multiplied mode)
        self.sent = [nm.premultiply(row[s], self.units[u]) for s, u in enumerate(self.survivors)]
        nets = nc.parse_networks("198.18.0.0/15")
        lim = nc.Limits.of_program("netec_xor")
        child_hosts = {READER[0]: 1, bench.agent(0): 2, bench.agent(1): 3, PARENT_VIP: 4}
        parent_hosts = {READER[0]: 1, CHILD_VIP: 2, bench.agent(2): 3, bench.agent(3): 4}
        self.child = bmv2_switch.Bmv2Switch(self.xor_json, child_hosts, program="netec_xor")
        self.parent = bmv2_switch.Bmv2Switch(self.xor_json, parent_hosts, program="netec_xor")
        for sw in (self.child, self.parent):
            sw.__enter__()
        self.child_cp = nc.ControlPlane(self.child.backend(), lim, CHILD_VIP,
                                        agent_networks=nets)
        self.parent_cp = nc.ControlPlane(self.parent.backend(), lim, PARENT_VIP,
                                         agent_networks=nets)
        return self

    def __exit__(self, *exc):
        for sw in (self.parent, self.child):
            sw.__exit__(*exc)

    def setup(self, cp, agents, length=None):
        req = {"op": "setup", "version": nc.VERSION, "group": "g", "k": len(agents), "rows": 1,
               "payload": XOR.payload, "length": length or self.LENGTH, "timeoutMs": 60000,
               "transport": "udp", "premultiplied": True,
               "survivors": [{"sender": s, "agent": a, "block": "b", "unitLength": self.LENGTH,
                              "token": ""} for s, a in enumerate(agents)],
               "coefficients": [[1] * len(agents)]}
        a = cp.handle(req)
        assert a["ok"], a
        host, port = a["vip"].split(":")
        a["vip_port"] = int(port)
        return a

    def tree(self):
        """The child task (survivors 0, 1), the parent (the child's sum as sender 0, then
        survivors 2, 3), the child attached as the parent's sender 0."""
        agent = lambda s: "%s:%d" % (bench.agent(s), AGENT_PORT)  # noqa: E731
        self.c = self.setup(self.child_cp, [agent(0), agent(1)])
        self.p = self.setup(self.parent_cp,
                            ["%s:%d" % (CHILD_VIP, self.c["vip_port"]), agent(2), agent(3)])
        return self.child_cp.handle(self.attach_request())

    def attach_request(self, **parent):
        req = {"op": "attach", "task": self.c["task"], "secret": self.c["secret"],
               "parent": dict({"vip": "%s:%d" % (PARENT_VIP, self.p["vip_port"]),
                               "task": self.p["task"], "slotArray": self.p["slotArray"],
                               "sender": 0, "slots": self.p["slots"]}, **parent)}
        return req

    @staticmethod
    def to(dst, dport, src, sport, wire):
        return IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / wire

    def reader_hello(self, task):
        wire = nm.Packet(nm.HELLO, task["task"], task["slotArray"], nm.READER, 0, 0, 0, 0,
                         nm.reader_hello(task["secret"], length=self.LENGTH)).encode()
        vip = CHILD_VIP if task is self.c else PARENT_VIP
        return self.to(vip, task["vip_port"], READER[0], READER[1], wire)

    def data(self, s, seq):
        """Survivor S's DATA of stripe SEQ to its switch (0, 1: the child's; 2, 3: the
        parent's, as its senders 1, 2)."""
        t, vip, sender = (self.c, CHILD_VIP, s) if s < 2 else (self.p, PARENT_VIP, s - 1)
        lo = seq * XOR.payload
        n = nm.payload_length(self.LENGTH, XOR.payload, seq)
        words = self.sent[s][lo:lo + n].ljust(n, b"\0")
        wire = nm.Packet(nm.DATA, t["task"], t["slotArray"], sender, 0, seq % t["slots"], seq,
                         0, words).encode()
        return self.to(vip, t["vip_port"], bench.agent(s), AGENT_PORT, wire)

    def stripes(self):
        return -(-self.LENGTH // XOR.payload)


def test_bmv2_two_levels_rebuild_a_unit_through_a_partial_sum(xor_json):
    """docs/protocol.md "Partial sums" over datagrams, on the P4 data plane: the child switch
    XORs its rack's two survivors into one stream that leaves as the parent's DATA of its
    sender (the parent's task, slot array and ring slot, from the child's VIP to the parent's,
    its checksum whole); the parent XORs it with its own two survivors into the RESULT, which
    must be the erased unit, byte for byte, whichever of a stripe's packets comes last. The
    parent's HELLO copy starts nothing at the child; the parent's ACK copy moves the child's
    ackSeq and reaches the child's survivors as their task's ACK, its window at most the
    child's EBSN window; a survivor's error at the child reaches the reader through the
    parent; an ACK naming the parent's task from any other address moves nothing."""
    with TwoLevels(xor_json) as t:
        assert t.tree() == {"ok": True}
        c, p, child, parent = t.c, t.p, t.child, t.parent
        link = nm.ParentLink(p["task"], p["slotArray"], 0, p["slots"], 0)
        # the reader's HELLO to the parent: a copy to each sender, the child's VIP among them;
        # at the child it starts nothing (only the reader's own HELLO to the child does)
        out = parent.process(t.reader_hello(p), expect=3)
        to_child = [o for o in out if o[IP].dst == CHILD_VIP]
        assert len(to_child) == 1 and sorted(o[IP].dst for o in out) == sorted(
            [CHILD_VIP, bench.agent(2), bench.agent(3)])
        mismatched = child.backend().counter_read("verdicts", XOR_COUNTED["MISMATCH"])
        assert child.process(to_child[0][IP]) == [], "the parent's HELLO copy passed the child"
        assert child.backend().counter_read("verdicts", XOR_COUNTED["MISMATCH"]) == \
            mismatched + 1
        # the reader's HELLO to the child reaches its survivors and leaves the parent bound
        out = child.process(t.reader_hello(c), expect=2)
        assert sorted(o[IP].dst for o in out) == [bench.agent(0), bench.agent(1)]
        assert child.register_read("reader_addr", c["task"]) == nc.ip_int(PARENT_VIP)
        assert child.register_read("reader_port", c["task"]) == p["vip_port"]
        rebuilt = {}
        for seq in range(t.stripes()):
            sums = []
            for s in (0, 1):
                sums += child.process(t.data(s, seq), expect=1 if s == 1 else 0)
            assert len(sums) == 1, "stripe %d: %d packets from the child" % (seq, len(sums))
            ps = sums[0]
            assert (ps[IP].src, ps[UDP].sport) == (CHILD_VIP, c["vip_port"])
            assert (ps[IP].dst, ps[UDP].dport) == (PARENT_VIP, p["vip_port"])
            got = nm.Packet.decode(bytes(ps[UDP].payload))  # checks the NetEC checksum
            lo, n = seq * XOR.payload, nm.payload_length(t.LENGTH, XOR.payload, seq)
            words = bytes(a ^ b for a, b in zip(t.sent[0][lo:lo + n].ljust(n, b"\0"),
                                                t.sent[1][lo:lo + n].ljust(n, b"\0")))
            want = link.as_data(nm.Packet(nm.RESULT, c["task"], c["slotArray"], 0, 0,
                                          seq % c["slots"], seq, 0, words))
            assert got.encode() == want.encode(), "stripe %d's partial sum" % seq
            # at the parent: the partial sum first on even stripes, last on odd ones
            order = [ps[IP], t.data(2, seq), t.data(3, seq)]
            if seq % 2:
                order = order[1:] + order[:1]
            results = []
            for n_, pkt in enumerate(order):
                results += parent.process(pkt, expect=1 if n_ == 2 else 0)
            assert len(results) == 1, "stripe %d: %d packets from the parent" % (
                seq, len(results))
            r = results[0]
            assert (r[IP].dst, r[UDP].dport) == READER
            res = nm.Packet.decode(bytes(r[UDP].payload))
            assert (res.type, res.task, res.seq) == (nm.RESULT, p["task"], seq)
            rebuilt[seq] = res.payload
        stream = nm.stream_of([rebuilt[q] for q in range(t.stripes())], t.LENGTH)
        assert stream == t.units[t.ERASED], "the rebuilt unit differs from the erased one"

        # the reader's ACK, through the parent to the child's survivors
        ack = nm.Packet(nm.ACK, p["task"], p["slotArray"], nm.READER, 0, 0, t.stripes(), 32)
        out = parent.process(t.to(PARENT_VIP, p["vip_port"], READER[0], READER[1],
                                  ack.encode()), expect=3)
        copy = next(o for o in out if o[IP].dst == CHILD_VIP)
        assert (copy[IP].src, copy[UDP].sport) == (PARENT_VIP, p["vip_port"])
        out = child.process(copy[IP], expect=2)
        assert sorted(o[IP].dst for o in out) == [bench.agent(0), bench.agent(1)]
        for o in out:
            a = nm.Packet.decode(bytes(o[UDP].payload))
            s = [bench.agent(0), bench.agent(1)].index(o[IP].dst)
            assert (a.type, a.task, a.array, a.sender, a.seq) == (
                nm.ACK, c["task"], c["slotArray"], s, t.stripes())
            assert a.window <= XOR.slots // 2
        assert child.register_read("ack_seq", c["task"]) & 0xFFFFFFFF == t.stripes()

        # a survivor's error at the child reaches the reader, through the parent
        err = nm.Packet(nm.HELLO, c["task"], c["slotArray"], 1, 0, 0, 0, 0,
                        b'{"error":"no such block"}').encode()
        out = child.process(t.to(CHILD_VIP, c["vip_port"], bench.agent(1), AGENT_PORT, err),
                            expect=1)
        assert len(out) == 1 and (out[0][IP].dst, out[0][UDP].dport) == (PARENT_VIP,
                                                                         p["vip_port"])
        fwd = nm.Packet.decode(bytes(out[0][UDP].payload))
        assert (fwd.type, fwd.task, fwd.array, fwd.sender) == (nm.HELLO, p["task"],
                                                                p["slotArray"], 0)
        out = parent.process(out[0][IP], expect=1)
        assert len(out) == 1 and (out[0][IP].dst, out[0][UDP].dport) == READER
        assert nm.Packet.decode(bytes(out[0][UDP].payload)).payload == \
            b'{"error":"no such block"}'

        # a reader's ACK to the child's own VIP and task: an attached child takes ACKs from
        # its parent only (its vip_in entry rewritten), so ackSeq stays and no survivor hears
        ack_seq = child.register_read("ack_seq", c["task"])
        forged = nm.Packet(nm.ACK, c["task"], c["slotArray"], nm.READER, 1, 0, 0, 32).encode()
        assert child.process(t.to(CHILD_VIP, c["vip_port"], READER[0], READER[1], forged)) \
            == [], "a reader's ACK moved an attached child"
        assert child.register_read("ack_seq", c["task"]) == ack_seq
        # the parent's ACK from another address: not the parent, nothing reaches a survivor
        forged = nm.Packet(nm.ACK, p["task"], p["slotArray"], 0, 1, 0, 0, 32).encode()
        child.send_ip(bytes(t.to(CHILD_VIP, c["vip_port"], proxy.STRANGER[0], p["vip_port"],
                                 forged)), port=child.hosts[PARENT_VIP])  # up the uplink
        assert child.receive(expect=0, timeout=1.0) == [], "a stranger's ACK reached a survivor"


def test_attach_refuses_what_it_cannot_serve(xor_json):
    """An attach needs the child's secret, a parent VIP inside the agent networks (the child
    streams there), a ring of a power of two slots, and comes once; each refusal names the
    field at fault and leaves the task unattached."""
    with TwoLevels(xor_json) as t:
        assert t.tree() == {"ok": True}
        cp = t.child_cp
        again = cp.handle(t.attach_request())
        assert again == {"ok": False, "reason": "attach: task %d is attached already"
                         % t.c["task"]}
        c2 = t.setup(cp, ["%s:%d" % (bench.agent(0), AGENT_PORT)])
        t.tree_task = t.c["task"]
        t.c = c2
        for parent, reason in [({"slots": 48}, "parent.slots: 48 not supported"),
                               ({"vip": "192.0.2.1:40000"}, "parent.vip: 192.0.2.1 is outside"),
                               ({"sender": 16}, "sender: must be an integer in 0..15"),
                               ({"vip": "nowhere"}, "parent.vip: must be IPv4:port")]:
            a = cp.handle(t.attach_request(**parent))
            assert not a["ok"] and a["reason"].startswith(reason), (parent, a)
        a = cp.handle(dict(t.attach_request(), secret="0" * 32))
        assert a == {"ok": False, "reason": "no task %d" % c2["task"]}
        # a task its reader's HELLO bound first: its RESULTs are that reader's for good
        c3 = t.setup(cp, ["%s:%d" % (bench.agent(0), AGENT_PORT)])
        t.c = c3
        assert len(t.child.process(t.reader_hello(c3), expect=1)) == 1
        a = cp.handle(t.attach_request(sender=1))
        assert a == {"ok": False, "reason": "attach: task %d's reader is bound already (its "
                     "HELLO came first)" % c3["task"]}, a
        assert cp.tasks[c3["task"]]["parent"] is None
        t.c = c2
        assert t.child.register_read("reader_addr", c2["task"]) == 0
        assert cp.handle(t.attach_request()) == {"ok": True}
        assert t.child.register_read("reader_addr", c2["task"]) == nc.ip_int(PARENT_VIP)
        attached = lambda: sorted(k for k in t.child.backend().handles  # noqa: E731
                                  if k[0] in ("parent_of", "parent_in"))
        assert len(attached()) == 4
        cp.release(c2["task"])  # the attach's entries go with the task's
        assert attached() == [("parent_in", tuple(e.key.values())) for e in cp.tasks[
            t.tree_task]["entries"][0] if e.table == "parent_in"] + [
            ("parent_of", (t.tree_task,))]
