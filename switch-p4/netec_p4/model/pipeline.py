"""A packet-by-packet model of the NetEC P4 pipeline (switch-p4/p4src), shaped like it.

The same tables (match-action, filled through the control plane's `Backend` interface), the
same registers (one cell read-modify-written once per pass, as a Tofino stateful ALU does),
the same actions and the same order as the P4 controls; the GF tables are read from the
generated gf_tables.p4 itself. Where netec_model.py states the protocol's rules, this module
states how the data plane computes them, and both must give the same bytes (the shared
vectors; test_pipeline_model.py).

Controls, in pipeline order, named as in the P4 sources (p4src/v1model/netec.p4 wires them;
the files beside it hold one each), each a step below commented with its name:
  NetecClassify   survivor_in / vip_in, task_cfg, sender_coeff: which task, sender, direction
  ReaderProof, SynAcks, ReaderAddress, IsnDeltas
                  the one-to-many TCP proxy: the reader's proof, SYN fan-out, SYN-ACK gather,
                  the reader's address, SEQ/ACK translation (ProxyPipeline.process)
  AdmitData       NetEC header checks; ack_seq (AckSeq) and window rules (stale, too far)
  SlotTracker     the slot's stripe and sender bits: new stripe, duplicate
  StripeCount     the stripe's packets counted to k: complete
  MultiplySums    coefficient x payload byte by log/exp tables, PASS_BYTES lanes per pass, XOR
                  into the slot's sum registers (32-bit words), each returning the new sum
  EbsnCounters, EbsnWindow
                  ACK from the reader: ack_seq = max, window = min(window, I - C) with C =
                  min(slot_starts - slot_completes, span)

The P4 programs spread this over passes: a DATA packet's first pass admits and tracks it,
one sum pass per part of its payload (recirculated) multiplies and aggregates that part, and
the last counts the stripe's packets, so that a pass lost on the way stalls the stripe instead
of completing it short. Nothing is lost between passes here, so the model counts right after
tracking and runs every part at once: the same packets out, the same counters.
"""

import os
import re
import socket
import struct

import netec_p4
from netec_p4.model import gf256
from netec_p4.model import netec_model as nm

GF_TABLES = os.path.join(netec_p4.P4SRC, "generated", "gf_tables.p4")

# Compile-time constants: p4src/include/config.p4 holds the same values (test checks).
TASKS = 32
SLOTS = 64
SENDERS = 16
PAYLOAD = 64
PASS_BYTES = 16
ROWS = 1
GF_LOG_ZERO = 511
# slot_seq of a free slot (SEQ_NONE in netec_logic.p4): above every stripe (MAX_STRIPES)
INVALID_SEQ = 0x7FFFFFFF
FREED, STALE_TAKEN = 1, 2  # what slot_seq's action answers when a packet takes a slot


def _load_gf_tables(path=GF_TABLES):
    """The const entries of GfLog and of the GfExpByte tables (GF_EXP_ENTRIES), parsed from the
    generated P4 file."""
    with open(path) as f:
        text = f.read()
    log_part = text[text.index("control GfLog"):text.index("#define GF_EXP_ENTRIES")]
    exp_part = text[text.index("#define GF_EXP_ENTRIES"):text.index("control GfExpByte0")]
    entry = re.compile(r"^\s+(\d+) : set\((\d+)\);( \\)?$", re.M)
    log = {int(k): int(v) for k, v, _ in entry.findall(log_part)}
    exp = {int(k): int(v) for k, v, _ in entry.findall(exp_part)}
    return log, exp


LOG_TABLE, EXP_TABLE = _load_gf_tables()


def gf_log(x):
    return LOG_TABLE.get(x, GF_LOG_ZERO)  # default action: zero()


def gf_exp(s):
    return EXP_TABLE.get(s, 0)  # default action: zero()



class Register:
    """A register array: each packet may run one action on one cell per pass."""

    def __init__(self, size, init=0):
        self.cells = [init] * size

    def execute(self, index, action):
        old = self.cells[index]
        new, out = action(old)
        self.cells[index] = new
        return out


class Pipeline:
    """Tables, registers and the NetEC controls of one switch pipe."""

    def __init__(self):
        # match-action tables: key tuple -> (action name, params dict)
        self.tables = {"vip_in": {}, "survivor_in": {}, "sender_coeff": {}, "task_cfg": {},
                       "replica": {}, "reader_secret": {}}
        self.mcast = {}  # multicast group -> replication ids
        # registers
        self.ack_seq = Register(TASKS)
        self.max_started_plus1 = Register(TASKS)  # highest stripe begun + 1 (0: none)
        self.slot_starts = Register(TASKS)  # stripes started in a free slot
        self.slot_completes = Register(TASKS)  # stripes completed
        self.slot_seq = Register(TASKS * SLOTS, INVALID_SEQ)
        self.slot_bits = Register(TASKS * SLOTS)
        self.slot_count = Register(TASKS * SLOTS)
        self.sums = [Register(TASKS * SLOTS) for _ in range(PAYLOAD // 4)]  # 32-bit words
        self.reader_addr = Register(TASKS)  # learned from the reader's SYN
        self.reader_port = Register(TASKS)
        self.synack_bits = Register(TASKS)
        self.reader_proven = Register(TASKS)  # 1 once the reader's HELLO carried the secret
        self.isn_delta = Register(TASKS * SENDERS)
        self.counters = {"dropped_malformed": 0, "dropped_stale": 0, "dropped_too_far": 0,
                         "dropped_duplicate": 0, "dropped_foreign": 0, "aggregated": 0,
                         "completed": 0, "recirculated": 0, "refused_no_secret": 0}

    # ---- table writes (the control plane's Backend interface lands here) ------------------

    def table_add(self, table, key, action, params):
        self.tables[table][tuple(key)] = (action, dict(params))

    def table_delete(self, table, key):
        self.tables[table].pop(tuple(key), None)

    def mcast_set(self, group, rids):
        self.mcast[group] = list(rids)

    def register_reset(self, task, array):
        """What the control plane clears when a task id and its slot array are reused."""
        self.ack_seq.cells[task] = 0
        self.max_started_plus1.cells[task] = 0
        self.slot_starts.cells[task] = 0
        self.slot_completes.cells[task] = 0
        self.reader_addr.cells[task] = 0
        self.reader_port.cells[task] = 0
        self.synack_bits.cells[task] = 0
        self.reader_proven.cells[task] = 0
        for s in range(SENDERS):
            self.isn_delta.cells[task * SENDERS + s] = 0
        for i in range(SLOTS):
            self.slot_seq.cells[array * SLOTS + i] = INVALID_SEQ
            self.slot_bits.cells[array * SLOTS + i] = 0
            self.slot_count.cells[array * SLOTS + i] = 0
            for w in self.sums:
                w.cells[array * SLOTS + i] = 0

    def register_read(self, name, index):
        return getattr(self, name).cells[index]

    def lookup(self, table, key):
        return self.tables[table].get(tuple(key))

    # ---- NetEC packets (the part of the pipeline the shared vectors drive) ----------------

    def netec(self, wire, from_reader):
        """One NetEC packet through Admit..Ebsn. Returns (verdict, [packets out])."""
        try:
            p = nm.Packet.decode(wire)
        except nm.Malformed:
            self.counters["dropped_malformed"] += 1
            return "MALFORMED", []
        cfg = self.lookup("task_cfg", (p.task, p.array))
        if cfg is None:
            self.counters["dropped_foreign"] += 1
            return "MISMATCH", []
        if from_reader:
            return self._ebsn(p, cfg)
        return self._data(p, cfg)

    def _data(self, p, cfg):
        _, c = cfg
        q = p.seq
        stripes = c["stripes"]
        length = (c["last_len"] if q == stripes - 1 else PAYLOAD) if q < stripes else -1
        coeff = self.lookup("sender_coeff", (p.task, p.sender))
        # AdmitData: header fields the tables and the stripe arithmetic can check
        if (p.type != nm.DATA or coeff is None or q >= stripes
                or p.slot != q & c["slot_mask"] or len(p.payload) != length):
            self.counters["dropped_foreign"] += 1
            return "MISMATCH", []
        ack = self.ack_seq.cells[p.task]  # AckSeq, read once: its one register action
        if q < ack:
            self.counters["dropped_stale"] += 1
            return "STALE", []
        if (q - ack) & c["far_mask"]:  # seq - ackSeq > S - 1
            self.counters["dropped_too_far"] += 1
            return "TOO_FAR", []
        # SlotTracker, then StripeCount: three registers of the slot, one action each: slot_seq
        # (a slot holding another stripe within the window holds a stale one: take it over),
        # slot_bits (returns the senders counted before; the duplicate check), slot_count
        # (counts to k, then 0: the completion; a stateful ALU compares, it cannot test bits
        # against a mask).
        idx = p.array * SLOTS + p.slot
        bit = 1 << p.sender
        k = c["k_minus1"] + 1
        # slot_seq answers 0 (the slot holds q), FREED (it held nothing: a stripe's first packet
        # takes a free slot) or STALE_TAKEN (it held a stale stripe's partial sums)
        taken = self.slot_seq.execute(
            idx, lambda held: (q, 0 if held == q else FREED if held == INVALID_SEQ
                               else STALE_TAKEN))
        reset = taken != 0
        old = self.slot_bits.execute(
            idx, lambda bits: (bit, 0) if reset else (bits | bit, bits))
        if old & bit:
            self.counters["dropped_duplicate"] += 1
            return "DUPLICATE", []
        fresh = reset or old == 0
        if fresh:
            self.max_started_plus1.execute(p.task, lambda m: (max(m, q + 1), None))

        def count(n):
            n = 0 if reset else n
            return (0, True) if n == k - 1 else (n + 1, False)

        complete = self.slot_count.execute(idx, count)
        verdict = "COMPLETED" if complete else "AGGREGATED"
        # EbsnCounters: a stripe started in a free slot, a stripe completed (partial slots are
        # their difference: both for k = 1, no change); a stale partial taken over stays one
        if taken == FREED:
            self.slot_starts.execute(p.task, lambda n: ((n + 1) & 0xFFFFFFFF, None))
        if complete:
            self.slot_completes.execute(p.task, lambda n: ((n + 1) & 0xFFFFFFFF, None))
        # MultiplySums: a pass of PASS_BYTES lanes per part (the packet recirculates for each)
        _, co = coeff
        lanes = list(p.payload) + [0] * (PAYLOAD - len(p.payload))
        product = [0] * PAYLOAD
        for ps in range(PAYLOAD // PASS_BYTES):
            if ps:
                self.counters["recirculated"] += 1
            for lane in range(PASS_BYTES):
                x = lanes[ps * PASS_BYTES + lane]
                y = gf_exp(gf_log(x) + co["log_a"])
                product[ps * PASS_BYTES + lane] = y
            # ... XOR into this pass's words, one action returning the new sum; the last
            # packet carries it. A slot taken afresh over a stale stripe's sums (reset), as
            # every stripe's first packet after a completed one is, overwrites them.
            for w in range(ps * PASS_BYTES // 4, (ps + 1) * PASS_BYTES // 4):
                word = struct.unpack("!I", bytes(product[4 * w:4 * w + 4]))[0]

                def agg(old, word=word):
                    new = (0 if reset else old) ^ word
                    return new, new

                out = self.sums[w].execute(idx, agg)
                if verdict == "COMPLETED":
                    product[4 * w:4 * w + 4] = list(struct.pack("!I", out))
        if verdict == "COMPLETED":  # second pass: the stripe's slot is free again
            self.slot_seq.execute(idx, lambda held: (INVALID_SEQ, None))
        if verdict == "AGGREGATED":
            self.counters["aggregated"] += 1
            return "AGGREGATED", []
        # The last DATA packet of the stripe becomes its RESULT (type, sender = row 0).
        self.counters["completed"] += 1
        result = nm.Packet(nm.RESULT, p.task, p.array, 0, 0, p.slot, q, 0,
                           bytes(product[:len(p.payload)]))
        return "COMPLETED", [result]

    def _ebsn(self, p, cfg):
        _, c = cfg
        if p.type != nm.ACK or p.sender != nm.READER or p.seq > c["stripes"]:
            self.counters["dropped_foreign"] += 1
            return "MISMATCH", []
        ack = self.ack_seq.execute(p.task, lambda a: (max(a, p.seq), max(a, p.seq)))
        started_plus1 = self.max_started_plus1.cells[p.task]
        span = max(0, started_plus1 - ack)
        partial = (self.slot_starts.cells[p.task] - self.slot_completes.cells[p.task]) & 0xFFFFFFFF
        held = min(span, partial)
        exposed = c["exposed"]
        remaining = exposed - held if held < exposed else 0
        out = nm.Packet(nm.ACK, p.task, p.array, p.sender, p.flags, p.slot, p.seq,
                        min(p.window, remaining), p.payload)
        return "ACK", [out]


# ---- the one-to-many TCP proxy (Classify, Proxy and egress's Translate) -------------------------

def _ip(text):
    return struct.unpack("!I", socket.inet_aton(text))[0]


def _dotted(v):
    return socket.inet_ntoa(struct.pack("!I", v))


def _tcp_checksum_ok(pkt):
    from scapy.layers.inet import TCP
    got = pkt[TCP].chksum
    fresh = pkt.copy()
    del fresh[TCP].chksum
    return fresh.__class__(bytes(fresh))[TCP].chksum == got


class ProxyPipeline(Pipeline):
    """The whole data plane on IPv4/TCP packets (scapy): what the P4 program does with a frame,
    addresses and ports included (Ethernet and egress ports are the l3_forward table's and the
    multicast group's, not modelled). process() returns the packets that leave the switch."""

    def process(self, pkt):
        from scapy.layers.inet import IP, TCP
        pkt = IP(bytes(pkt))  # as it arrives: built, checksums as sent
        if TCP not in pkt:
            return [pkt]
        ip, tcp = pkt[IP], pkt[TCP]
        key4 = (_ip(ip.src), tcp.sport, _ip(ip.dst), tcp.dport)
        hit = self.lookup("survivor_in", key4)
        role = "survivor" if hit else None
        if not hit:
            hit = self.lookup("vip_in", key4[2:])
            role = "reader" if hit else None
        if not hit:
            return [pkt]  # not NetEC: l3_forward
        prm = hit[1]
        task, array = prm["task"], prm["slot_array"]
        cfg = self.lookup("task_cfg", (task, array))
        if cfg is None:
            return [pkt]
        payload = bytes(tcp.payload)
        netec = len(payload) >= nm.HEADER
        if netec and not _tcp_checksum_ok(pkt):
            self.counters["dropped_malformed"] += 1
            return []
        vip = (ip.dst, tcp.dport)
        if role == "survivor":
            sender = prm["sender"]
            idx = task * SENDERS + sender
            if netec and payload[1] == nm.DATA:
                verdict, out = self.netec(payload, False)
                if verdict != "COMPLETED":
                    return []
                return [self._to_reader(pkt, task, idx, vip, out[0].encode())]
            if tcp.flags & 0x02:  # SYN-ACK: learn the ISN, forward the last one
                delta = (tcp.seq - prm["vip_isn"]) & 0xFFFFFFFF
                self.isn_delta.cells[idx] = delta
                coeff = self.lookup("sender_coeff", (task, sender))
                bits = self.synack_bits.execute(
                    task, lambda b: (b | coeff[1]["bit_s"], b | coeff[1]["bit_s"]))
                if bits != cfg[1]["k_mask"]:
                    return []
                return [self._to_reader(pkt, task, idx, vip, payload)]
            if sender == 0 or netec:  # sender 0 speaks for all; agents' errors pass
                return [self._to_reader(pkt, task, idx, vip, payload)]
            return []
        # the reader: until its HELLO carries the task's secret (reader_secret, keyed on the
        # VIP) only its handshake and segments without a payload pass, and a SYN (re)binds the
        # VIP; the proving HELLO binds it to its own source; after it nothing rebinds it and
        # SYNs are dropped; a HELLO without the secret never passes; a fragment never does
        if ip.flags.MF or ip.frag:
            return []
        syn = bool(tcp.flags & 0x02)
        # the parser takes a secret from a HELLO (reserved 0) whose header says it holds one,
        # in a segment with room for it (tcp_payload's hello_room)
        words = None
        if (netec and payload[1] == nm.HELLO and payload[18:20] == b"\0\0"
                and int.from_bytes(payload[14:16], "big") >= nm.HELLO_SECRET_END
                and len(payload) >= nm.HEADER + nm.HELLO_SECRET_END):
            words = nm.hello_secret_words(payload[nm.HEADER:])
        proves = (words is not None
                  and self.lookup("reader_secret", key4[2:] + words) is not None)
        was = self.reader_proven.execute(task, lambda v: (1 if proves else v, v))
        if netec and payload[1] == nm.ACK:
            verdict, out = self.netec(payload, True)  # ackSeq moves before the proof is read
            if not was:
                self.counters["refused_no_secret"] += 1
                return []
            if verdict != "ACK":
                return []
            payload = out[0].encode()
        else:
            if not was and syn and not payload:
                self.synack_bits.cells[task] = 0
            if not was and (proves or (syn and not payload)):
                self.reader_addr.cells[task] = _ip(ip.src)
                self.reader_port.cells[task] = tcp.sport
            if syn and was:
                return []  # the VIP is its proven reader's
            if (netec and payload[1] == nm.HELLO and not proves) or (
                    not was and not proves and payload):
                self.counters["refused_no_secret"] += 1
                return []
        copies = []
        for rid in self.mcast.get(task + 1, []):
            rep = self.lookup("replica", (rid,))
            if rep is None:
                continue
            r = rep[1]
            delta = self.isn_delta.cells[task * SENDERS + r["sender"]]
            body = payload
            if netec and payload[1] == nm.HELLO:
                h = nm.Packet.decode(payload)
                h.sender = r["sender"]
                body = h.encode()
            copies.append(self._build(pkt, _dotted(r["vip_addr"]), r["vip_port"],
                                      _dotted(r["agent_addr"]), r["agent_port"], tcp.seq,
                                      (tcp.ack + delta) & 0xFFFFFFFF if tcp.flags & 0x10
                                      else tcp.ack, body))
        return copies

    def _to_reader(self, pkt, task, idx, vip, body):
        from scapy.layers.inet import TCP
        delta = self.isn_delta.cells[idx]
        return self._build(pkt, vip[0], vip[1], _dotted(self.reader_addr.cells[task]),
                           self.reader_port.cells[task],
                           (pkt[TCP].seq - delta) & 0xFFFFFFFF, pkt[TCP].ack, body)

    @staticmethod
    def _build(pkt, src, sport, dst, dport, seq, ack, body):
        from scapy.layers.inet import IP, TCP
        t = pkt[TCP]
        out = (IP(src=src, dst=dst, id=pkt[IP].id, ttl=pkt[IP].ttl)
               / TCP(sport=sport, dport=dport, seq=seq, ack=ack, flags=t.flags,
                     window=t.window, options=t.options) / body)
        return IP(bytes(out))  # on the wire: checksums filled in, as the deparser does
