#!/usr/bin/env python3
"""Generates the shared NetEC switch test vectors (*.json here) from real RS stripes.

Each vector is one switch task: its setup, the erased units (ground truth), and a sequence of
events (a packet from a survivor or from the reader) with the verdict and the exact packets the
switch must emit. The generator runs the Python reference model (netec_p4.model, in
switch-p4/) and refuses to write a vector unless the RESULT payloads rebuild the erased units
byte for byte. The Java software switch (SharedVectorTest) and the Python model
(src/test/python) replay every file.

Usage: PYTHONPATH=switch-p4 python3 src/test/vectors/generate.py [DIR]   (rewrites the files
here, or writes to DIR; the files here are committed, and a test checks they are exactly what
this writes)
"""

import json
import os
import random
import sys

from netec_p4.model import gf256
from netec_p4.model import netec_model as nm

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = HERE  # where write() puts files; main() takes another directory for checks

P = 64
SLOTS = 8


class Scenario:
    def __init__(self, name, description, k, m, erased, length, seed, premultiplied=False,
                 payload=P):
        self.name, self.description = name, description
        self.P = payload
        self.premultiplied = premultiplied
        self.k, self.m, self.erased, self.length = k, m, erased, length
        rnd = random.Random(seed)
        # Data units of unequal length, as in a group's last stripe; parity as long as unit 0.
        lengths = [length] + [length - rnd.randrange(length // 2) for _ in range(k - 1)]
        data = [bytes(rnd.randrange(256) for _ in range(n)) + bytes(length - n) for n in lengths]
        self.units = data + gf256.encode(data, m)
        self.survivors = [i for i in range(k + m) if i not in erased][:k]
        self.coefficients = gf256.decode_rows(k, m, self.survivors, erased)
        self.task = nm.Task(3, 1, SLOTS, k, len(erased), payload, length, self.coefficients,
                            premultiplied)
        self.events = []
        self.results = {}

    def data(self, sender, seq, **override):
        """Survivor sender's DATA packet for stripe seq; override changes header fields."""
        n = self.task.payload_length(seq)
        unit = self.units[self.survivors[sender]]
        fields = dict(type_=nm.DATA, task=3, array=1, sender=sender, flags=0,
                      slot=seq % SLOTS, seq=seq, window=0,
                      payload=unit[seq * self.P:seq * self.P + n].ljust(n, b"\0"))
        if self.premultiplied:
            fields["payload"] = nm.premultiply(self.coefficients[0][sender], fields["payload"])
        fields.update(override)
        return nm.Packet(**fields).encode()

    def ack(self, seq, flags=0, window=0xFFFF):
        return nm.Packet(nm.ACK, 3, 1, nm.READER, flags, 0, seq, window).encode()

    def survivor(self, wire, expect=None):
        try:
            p = nm.Packet.decode(wire)
        except nm.Malformed:
            verdict, out = "MALFORMED", []
        else:
            verdict, out = self.task.on_data(p)
        if expect is not None and verdict != expect:
            raise AssertionError("%s: expected %s, model said %s" % (self.name, expect, verdict))
        for r in out:
            self.results.setdefault((r.sender, r.seq), r.payload)
        self.events.append({"from": "survivor", "packet": wire.hex(), "verdict": verdict,
                            "emit": [r.encode().hex() for r in out]})

    def reader(self, wire, window=None):
        out = self.task.on_ack(nm.Packet.decode(wire))
        if window is not None and out.window != window:
            raise AssertionError("%s: expected window %d, model said %d"
                                 % (self.name, window, out.window))
        self.events.append({"from": "reader", "packet": wire.hex(),
                            "emit": [] if out is None else [out.encode().hex()]})

    def stripe(self, seq, order=None):
        for s in order or range(self.k):
            self.survivor(self.data(s, seq))

    def write(self):
        for r, e in enumerate(self.erased):
            got = nm.stream_of((self.results[(r, q)] for q in range(self.task.stripes)),
                               self.length)
            if got != self.units[e]:
                raise AssertionError("%s: unit %d not rebuilt" % (self.name, e))
        if not self.task.finished:
            raise AssertionError("%s: task not finished" % self.name)
        doc = {"name": self.name, "description": self.description, "protocol": nm.VERSION,
               "task": 3, "slotArray": 1, "slots": SLOTS, "k": self.k, "m": self.m,
               "rows": len(self.erased),
               "payload": self.P, "length": self.length, "coefficients": self.coefficients,
               "premultiplied": self.premultiplied,
               "survivorUnits": self.survivors, "erased": self.erased,
               "erasedUnits": [self.units[e].hex() for e in self.erased],
               "events": self.events}
        with open(os.path.join(OUT, self.name + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


def in_order():
    s = Scenario("rs32-in-order", "RS(3,2), unit 1 erased, packets in order, ACK every 2 stripes",
                 3, 2, [1], 5 * P + 17, 1)
    for q in range(s.task.stripes):
        s.stripe(q, [q % 3, (q + 1) % 3, (q + 2) % 3])
        if q % 2 == 1:
            s.reader(s.ack(q + 1))
    s.reader(s.ack(s.task.stripes, nm.FIN))
    s.write()


def faults(name="rs63-faults", erased=(0, 7), seed=2, premultiplied=False, payload=P, tail=5):
    """Duplicates, reordering, a loss recovered by RETX, stale and too-far packets, EBSN;
    19 whole stripes of PAYLOAD bytes and a last one of TAIL."""
    which = ("units " + " and ".join(map(str, erased))) if len(erased) > 1 else \
        "unit %d" % erased[0]
    how = ", pre-multiplied by the survivors (the switch only XORs)" if premultiplied else ""
    s = Scenario(name, "RS(6,3), %s erased%s: duplicates, reordering, a lost packet recovered "
                 "by RETX and go-back-N, stale and too-far packets, EBSN windows" % (which, how),
                 6, 3, list(erased), 19 * payload + tail, seed, premultiplied, payload)
    s.stripe(0)
    s.survivor(s.data(3, 1))
    s.survivor(s.data(3, 1), "DUPLICATE")
    s.stripe(1, [0, 1, 2, 4, 5])
    # stripes 2 and 3 interleaved and reversed
    for snd in range(6):
        s.survivor(s.data(5 - snd, 3))
        s.survivor(s.data(snd, 2))
    s.reader(s.ack(4))
    s.survivor(s.data(0, 0), "STALE")
    s.survivor(s.data(1, 12), "TOO_FAR")
    # stripe 4 loses sender 2's packet; stripes 5 and 6 go ahead
    s.stripe(4, [0, 1, 3, 4, 5])
    s.stripe(5)
    s.stripe(6)
    s.reader(s.ack(4, nm.RETX))  # the reader misses stripe 4: everyone goes back to it
    s.stripe(4)  # five duplicates and the lost packet
    for q in (5, 6):
        s.stripe(q)  # go-back-N resends: stripes already emitted start fresh slots
    s.reader(s.ack(7))
    for q in range(7, s.task.stripes):
        s.stripe(q)
        if q % 2 == 0:
            s.reader(s.ack(q + 1))
    s.reader(s.ack(s.task.stripes, nm.FIN))
    s.write()


def premultiplied_short_tail():
    """Datagram XOR program's one-pass-of-sums path: a last stripe within one half of its words;
    a corrupt packet and a mismatched length first."""
    s = Scenario("rs32-premultiplied-p256-short-tail", "RS(3,2), unit 1 erased, pre-multiplied, "
                 "256 bytes a packet, a last stripe of 40 bytes; a corrupt packet and one of a "
                 "wrong length are dropped without effect", 3, 2, [1], 3 * 256 + 40, 8,
                 premultiplied=True, payload=256)
    bad_sum = bytearray(s.data(0, 0))
    bad_sum[100] ^= 0x01
    s.survivor(bytes(bad_sum), "MALFORMED")
    s.survivor(s.data(1, 0, payload=bytes(128)), "MISMATCH")
    for q in range(s.task.stripes):
        s.stripe(q, [(q + i) % 3 for i in range(3)])
        s.reader(s.ack(q + 1))
    s.reader(s.ack(s.task.stripes, nm.FIN))
    s.write()


def three_rows():
    s = Scenario("rs63-three-rows", "RS(6,3), units 8, 2, 5 erased (parity first), in order",
                 6, 3, [8, 2, 5], 7 * P + 63, 3)
    for q in range(s.task.stripes):
        s.stripe(q)
        s.reader(s.ack(q + 1))
    s.reader(s.ack(s.task.stripes, nm.FIN))
    s.write()


def malformed():
    s = Scenario("rs32-malformed", "RS(3,2), unit 4 erased: malformed and foreign packets are "
                 "dropped without effect", 3, 2, [4], 3 * P, 4)
    good = bytearray(s.data(0, 0))
    bad_sum = bytearray(good)
    bad_sum[25] ^= 0x10
    s.survivor(bytes(bad_sum), "MALFORMED")
    s.survivor(s.data(0, 0, task=4), "MISMATCH")
    s.survivor(s.data(0, 0, slot=5), "MISMATCH")
    s.survivor(s.data(0, 0, payload=bytes(10)), "MISMATCH")
    foreign = nm.Packet.decode(s.data(0, 0))
    foreign.sender = 3  # no sender 3 in a k=3 task
    s.survivor(foreign.encode(), "MISMATCH")
    # a version 1 packet, sealed as its sender would seal it: refused for its version
    v1 = bytearray(good)
    v1[0], v1[16], v1[17] = 1, 0, 0
    c = nm.checksum(bytes(v1))
    v1[16:18] = (c if c else 0xFFFF).to_bytes(2, "big")
    s.survivor(bytes(v1), "MALFORMED")
    for q in range(s.task.stripes):
        s.stripe(q)
    s.reader(s.ack(s.task.stripes, nm.FIN))
    s.write()


def slot_reuse():
    s = Scenario("rs32-slot-reuse", "RS(3,2), unit 0 erased: a late duplicate of a delivered "
                 "stripe starts stale partial sums, which the stripe that reuses the slot "
                 "clears", 3, 2, [0], 12 * P, 5)
    for q in range(3):
        s.stripe(q)
    late = s.data(1, 1)
    s.reader(s.ack(3))
    s.survivor(late, "STALE")
    for q in range(3, 9):
        s.stripe(q)
    s.reader(s.ack(9))
    for q in range(9, s.task.stripes):
        s.stripe(q)
    s.reader(s.ack(s.task.stripes, nm.FIN))
    s.write()


def ebsn_partial_slots():
    """EBSN's C (version 2): the slots holding partial sums, bounded by the span."""
    s = Scenario("rs32-ebsn-partial-slots", "RS(3,2), unit 2 erased: EBSN counts the slots "
                 "holding partial sums, not stripes completed but not yet ACKed, and the span "
                 "bounds a late duplicate's partial sums below ackSeq", 3, 2, [2], 15 * P, 7)
    exposed = SLOTS // 2
    for q in range(3):
        s.stripe(q)
    s.reader(s.ack(0), window=exposed)  # three stripes complete, none held: the whole I
    s.survivor(s.data(0, 3))
    s.reader(s.ack(3), window=exposed - 1)  # stripe 3 holds partial sums
    s.stripe(3, [1, 2])
    s.stripe(4)
    s.stripe(5)
    s.reader(s.ack(4, nm.RETX), window=exposed)  # the reader misses stripe 4
    s.survivor(s.data(0, 4))  # go-back-N: stripe 4 again, and 5, which the reader has
    s.survivor(s.data(0, 5))
    s.reader(s.ack(4), window=exposed - 2)
    s.stripe(4, [1, 2])
    s.reader(s.ack(6), window=exposed)  # stripe 5's partial sums lie below ackSeq: span 0
    for q in range(6, s.task.stripes):
        s.stripe(q)  # stripe 13 takes over slot 5 from stripe 5's stale partial sums
        s.reader(s.ack(q + 1), window=exposed)
    s.reader(s.ack(s.task.stripes, nm.FIN))
    s.write()


def partial_sums():
    """A two-level task (docs/protocol.md, "Partial sums"): RS(6,3), unit 0 erased; flat
    senders 1, 2, 3 (one rack's) summed by a child task whose RESULTs go on as the parent's
    sender 3, senders 0, 4, 5 straight to the parent. One partial sum is lost on its way up
    and recovered by the reader's RETX, passed down through the parent to the child."""
    s = Scenario("rs63-two-levels", "", 6, 3, [0], 9 * P + 36, 8)
    flat = s.coefficients[0]
    rack = [1, 2, 3]
    direct = [0, 4, 5]
    # the child's ring twice the parent's, and the parent's first window to it smaller than
    # the child's half: a partial sum's slot is seq mod the parent's S, not the child's
    child_slots, link_window = 2 * SLOTS, 3
    link = nm.ParentLink(3, 1, 3, SLOTS, link_window)
    child = nm.Task(4, 2, child_slots, 3, 1, P, s.length, [[flat[f] for f in rack]])
    parent = nm.Task(3, 1, SLOTS, 4, 1, P, s.length, [[flat[f] for f in direct] + [1]])
    events, rebuilt = [], {}

    def unit_data(task, array, sender, flat_sender, seq):
        n = parent.payload_length(seq)
        unit = s.units[s.survivors[flat_sender]]
        slots = child_slots if task == 4 else SLOTS
        return nm.Packet(nm.DATA, task, array, sender, 0, seq % slots, seq, 0,
                         unit[seq * P:seq * P + n].ljust(n, b"\0"))

    def to_parent(p):
        verdict, out = parent.on_data(p)
        events.append({"at": "parent", "from": "survivor", "packet": p.encode().hex(),
                       "verdict": verdict, "emit": [r.encode().hex() for r in out]})
        for r in out:
            rebuilt.setdefault(r.seq, r.payload)

    def to_child(sender, seq, lose=False):
        verdict, out = child.on_data(unit_data(4, 2, sender, rack[sender], seq))
        events.append({"at": "child", "from": "survivor",
                       "packet": unit_data(4, 2, sender, rack[sender], seq).encode().hex(),
                       "verdict": verdict, "emit": [r.encode().hex() for r in out]})
        for r in out:
            up = link.as_data(r)
            events.append({"at": "child", "from": "result", "packet": r.encode().hex(),
                           "emit": [up.encode().hex()]})
            if not lose:
                to_parent(up)

    def ack(seq, flags=0):
        copy = parent.on_ack(nm.Packet(nm.ACK, 3, 1, nm.READER, flags, 0, seq, 0xFFFF))
        events.append({"at": "parent", "from": "reader",
                       "packet": nm.Packet(nm.ACK, 3, 1, nm.READER, flags, 0, seq,
                                           0xFFFF).encode().hex(),
                       "emit": [copy.encode().hex()]})
        mine = child.on_ack(link.as_child_ack(copy, 4, 2))
        events.append({"at": "child", "from": "parent", "packet": copy.encode().hex(),
                       "emit": [mine.encode().hex()]})

    for q in range(parent.stripes):
        for i, f in enumerate(direct):
            if i == 1:  # the rack's partial sum arrives between the direct survivors
                for c in range(3):
                    to_child(c, q, lose=(q == 5))
            to_parent(unit_data(3, 1, i, f, q))
        if q == 5:
            ack(5, nm.RETX)  # the partial sum of stripe 5 was lost: go back
            for c in range(3):
                to_child(c, 5)
        if q % 2 == 1:
            ack(q + 1)
    ack(parent.stripes, nm.FIN)
    got = nm.stream_of((rebuilt[q] for q in range(parent.stripes)), s.length)
    if got != s.units[0] or not parent.finished or not child.finished:
        raise AssertionError("rs63-two-levels: unit 0 not rebuilt through two levels")
    doc = {"name": s.name, "description": partial_sums.__doc__.split("\n    ", 1)[0] + " " +
           " ".join(l.strip() for l in partial_sums.__doc__.split("\n")[1:]).strip(),
           "protocol": nm.VERSION, "k": 6, "m": 3, "payload": P, "length": s.length,
           "survivorUnits": s.survivors, "erased": [0], "erasedUnits": [s.units[0].hex()],
           "child": {"task": 4, "slotArray": 2, "slots": child_slots, "k": 3,
                     "coefficients": child.coefficients, "flatSenders": rack},
           "parent": {"task": 3, "slotArray": 1, "slots": SLOTS, "k": 4,
                      "coefficients": parent.coefficients, "flatSenders": direct + [None]},
           "link": {"task": 3, "slotArray": 1, "sender": 3, "slots": SLOTS,
                    "window": link_window},
           "events": events}
    os.makedirs(os.path.join(OUT, "partial-sums"), exist_ok=True)
    with open(os.path.join(OUT, "partial-sums", s.name + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main(out=HERE):
    global OUT
    OUT = out
    in_order()
    faults()
    # the same faults with one row: what the P4 data plane (one row) can replay too
    faults("rs63-one-row-faults", (3,), 6)
    # the same, pre-multiplied: the survivors multiply, the switch XORs
    faults("rs63-premultiplied-faults", (3,), 6, premultiplied=True)
    # ... with 256 bytes a packet and a last stripe of 38 words: what the datagram XOR P4
    # program (switch-p4/p4src/*/netec_xor.p4) replays, its halves of 32 words (both passes of
    # a sum) and a short second half
    faults("rs63-premultiplied-p256-faults", (3,), 6, premultiplied=True, payload=256, tail=150)
    premultiplied_short_tail()
    three_rows()
    malformed()
    slot_reuse()
    ebsn_partial_slots()
    partial_sums()
    return out


if __name__ == "__main__":
    print("vectors written to", main(sys.argv[1] if len(sys.argv) > 1 else HERE))
