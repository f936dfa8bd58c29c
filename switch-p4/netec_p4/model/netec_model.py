"""Packet-by-packet reference model of a NetEC switch task (docs/protocol.md, version 3).

One task's slot ring, progress trackers and partial sums, with the DATA and ACK rules of the
protocol. The P4 pipeline (switch-p4/) and the Java software switch (SwitchTask) implement the
same rules; shared vectors (src/test/vectors) hold all three to the same bytes.
"""

import json
import struct

from netec_p4.model import gf256

VERSION = 3
HEADER = 20
DATA, RESULT, ACK, HELLO = 1, 2, 3, 4
FIN, RETX = 1, 2
READER = 0xFF
WORD = 4


# The reader's HELLO as a P4 switch reads it (docs/protocol.md "HELLO"): its JSON begins with
# READER_HELLO_PREFIX and then the task's secret (32 lowercase hex digits), so the data plane
# finds the secret at a fixed offset (p4src/include/headers.p4 reader_hello_h).
READER_HELLO_PREFIX = b'{"role":"reader","secret":"'
SECRET_DIGITS = 32
HELLO_SECRET_END = len(READER_HELLO_PREFIX) + SECRET_DIGITS  # 59


def reader_hello(secret, **fields):
    """The reader HELLO's payload in the layout every reader writes: role, secret, then FIELDS,
    compact (the Java reader's Jackson output has the same bytes)."""
    body = {"role": "reader", "secret": secret}
    body.update(fields)
    return json.dumps(body, separators=(",", ":")).encode()


def hello_secret_words(payload):
    """The eight 32-bit words a P4 switch reads as a HELLO's secret (reader_hello_h s0..s7),
    or None when the payload is too short to hold one."""
    if len(payload) < HELLO_SECRET_END:
        return None
    raw = payload[len(READER_HELLO_PREFIX):HELLO_SECRET_END]
    return tuple(struct.unpack("!8I", raw))


def secret_words(secret):
    """The reader_secret key words of a task's SECRET (its ASCII hex digits)."""
    raw = secret.encode("ascii")
    if len(raw) != SECRET_DIGITS:
        raise ValueError("a secret is %d hex digits, not %d" % (SECRET_DIGITS, len(raw)))
    return tuple(struct.unpack("!8I", raw))


def payload_length(length, payload, seq):
    """Payload bytes of stripe seq's packets: its min(P, L - seq*P) stream bytes in whole
    words (the bytes past L zero), so that no packet ends in a partial word."""
    n = min(payload, length - seq * payload)
    return (n + WORD - 1) // WORD * WORD


def premultiply(coefficient, payload):
    """What a survivor of a pre-multiplied task sends: its payload times its coefficient."""
    return bytes(gf256.mul(coefficient, x) for x in payload)


def stream_of(payloads, length):
    """A row's stream from its RESULT payloads in stripe order: cut to L, after checking that
    the last stripe's padding past L came back zero."""
    joined = b"".join(payloads)
    if any(joined[length:]):
        raise AssertionError("nonzero bytes past the stream's length %d" % length)
    return joined[:length]


class Malformed(Exception):
    """A packet a receiver must drop; the message says why."""


def checksum(buf: bytes) -> int:
    """RFC 1071 ones'-complement sum, complemented (0 is sent as 0xffff)."""
    if len(buf) % 2:
        buf += b"\0"
    total = sum(struct.unpack("!%dH" % (len(buf) // 2), buf))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class Packet:
    __slots__ = ("type", "task", "array", "sender", "flags", "slot", "seq", "window", "payload")

    def __init__(self, type_, task, array, sender, flags, slot, seq, window, payload=b""):
        self.type, self.task, self.array, self.sender = type_, task, array, sender
        self.flags, self.slot, self.seq, self.window = flags, slot, seq, window
        self.payload = bytes(payload)

    def encode(self) -> bytes:
        head = struct.pack("!BBBBBBHIHHHH", VERSION, self.type, self.task, self.array,
                           self.sender, self.flags, self.slot, self.seq, self.window,
                           len(self.payload), 0, 0)
        s = checksum(head + self.payload)
        head = head[:16] + struct.pack("!H", s if s else 0xFFFF) + head[18:]
        return head + self.payload

    @staticmethod
    def decode(buf: bytes) -> "Packet":
        if len(buf) < HEADER:
            raise Malformed("truncated packet: %d bytes" % len(buf))
        (version, type_, task, array, sender, flags, slot, seq, window, length, _check,
         reserved) = struct.unpack("!BBBBBBHIHHHH", buf[:HEADER])
        if len(buf) != HEADER + length:
            raise Malformed("length %d but %d bytes" % (length, len(buf) - HEADER))
        if version != VERSION:
            raise Malformed("version %d, expected %d" % (version, VERSION))
        if not DATA <= type_ <= HELLO:
            raise Malformed("unknown type %d" % type_)
        if flags & ~(FIN | RETX):
            raise Malformed("unknown flags 0x%x" % flags)
        if reserved:
            raise Malformed("reserved bytes not zero")
        if checksum(buf) != 0:
            raise Malformed("checksum mismatch")
        return Packet(type_, task, array, sender, flags, slot, seq, window, buf[HEADER:])


class Task:
    """One task of a switch: slots x rows partial sums, a tracker per slot, EBSN state."""

    def __init__(self, task_id, array, slots, k, rows, payload, length, coefficients,
                 premultiplied=False):
        self.task_id, self.array, self.slots = task_id, array, slots
        self.k, self.rows, self.payload, self.length = k, rows, payload, length
        if premultiplied and rows != 1:
            raise ValueError("a pre-multiplied task has one row")
        # pre-multiplied: each survivor sent coefficient x unit, the switch only XORs
        self.coefficients = [[1] * k] if premultiplied else coefficients
        self.stripes = (length + payload - 1) // payload
        self.sums = [[bytearray(payload) for _ in range(rows)] for _ in range(slots)]
        self.tracker = [0] * slots
        self.slot_seq = [0] * slots
        self.max_started = -1
        self.ack_seq = 0
        self.finished = False

    def payload_length(self, seq):
        return payload_length(self.length, self.payload, seq)

    def span(self):
        return max(0, self.max_started + 1 - self.ack_seq)

    def partial_slots(self):
        """Slots holding partial sums (a late duplicate's below ack_seq included)."""
        return sum(1 for t in self.tracker if t)

    def ebsn_window(self):
        exposed = self.slots // 2
        c = min(self.partial_slots(), self.span())
        return exposed - c if c < exposed else 0

    def on_data(self, p: Packet):
        """Returns (verdict, RESULT packets emitted)."""
        q, s = p.seq, p.sender
        if (p.type != DATA or p.task != self.task_id or p.array != self.array or s >= self.k
                or q >= self.stripes or p.slot != q % self.slots
                or len(p.payload) != self.payload_length(q)):
            return "MISMATCH", []
        if q < self.ack_seq:
            return "STALE", []
        if q >= self.ack_seq + self.slots:
            return "TOO_FAR", []
        i = p.slot
        if self.tracker[i] and self.slot_seq[i] != q:
            if self.slot_seq[i] >= self.ack_seq:
                return "SLOT_BUSY", []
            self._clear(i)
        bit = 1 << s
        if self.tracker[i] & bit:
            return "DUPLICATE", []
        for r in range(self.rows):
            c = self.coefficients[r][s]
            if c:
                row = self.sums[i][r]
                for x, byte in enumerate(p.payload):
                    row[x] ^= gf256.mul(c, byte)
        if not self.tracker[i]:
            self.slot_seq[i] = q
            self.max_started = max(self.max_started, q)
        self.tracker[i] |= bit
        if self.tracker[i] != (1 << self.k) - 1:
            return "AGGREGATED", []
        n = len(p.payload)
        out = [Packet(RESULT, self.task_id, self.array, r, 0, i, q, 0, bytes(self.sums[i][r][:n]))
               for r in range(self.rows)]
        self._clear(i)
        return "COMPLETED", out

    def _clear(self, i):
        self.tracker[i] = 0
        for row in self.sums[i]:
            row[:] = bytes(len(row))

    def on_ack(self, p: Packet):
        """The ACK every survivor gets (window lowered by EBSN), or None if not this task's."""
        if (p.type != ACK or p.task != self.task_id or p.array != self.array
                or p.sender != READER or p.seq > self.stripes):
            return None
        self.ack_seq = max(self.ack_seq, p.seq)
        if p.flags & FIN and self.ack_seq == self.stripes:
            self.finished = True
        return Packet(ACK, p.task, p.array, p.sender, p.flags, p.slot, p.seq,
                      min(p.window, self.ebsn_window()), p.payload)


class ParentLink:
    """Where a child task's stream goes (docs/protocol.md, "Partial sums"): the parent's task,
    slot array, the partial sum's sender number there, the parent's slot count and first
    window."""

    def __init__(self, task, array, sender, slots, window):
        self.task, self.array, self.sender = task, array, sender
        self.slots, self.window = slots, window

    def as_data(self, result: Packet) -> Packet:
        """The child's RESULT as the parent's DATA of this sender."""
        return Packet(DATA, self.task, self.array, self.sender, result.flags,
                      result.seq % self.slots, result.seq, result.window, result.payload)

    def as_child_ack(self, ack: Packet, child_task, child_array):
        """The parent's ACK to this sender (sender 0xFF over TCP, or this sender's number) as
        the child's reader ACK; None when it is not one (dropped)."""
        if (ack.type != ACK or ack.task != self.task or ack.array != self.array
                or ack.sender not in (self.sender, READER)):
            return None
        return Packet(ACK, child_task, child_array, READER, ack.flags, 0, ack.seq, ack.window,
                      ack.payload)
