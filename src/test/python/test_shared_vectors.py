"""Replays every shared vector through the Python reference model of the switch."""

import glob
import importlib.util
import json
import os

import pytest

from netec_p4.model import netec_model as nm

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
VECTORS = sorted(glob.glob(os.path.join(ROOT, "src", "test", "vectors", "*.json")))
# two-level tasks (docs/protocol.md, "Partial sums"): a child task's stream as a parent's sender
PARTIAL_SUMS = sorted(glob.glob(os.path.join(ROOT, "src", "test", "vectors", "partial-sums",
                                             "*.json")))


def test_vectors_exist():
    assert len(VECTORS) >= 5


def test_committed_vectors_are_what_the_generator_writes(tmp_path):
    # generate.py is a script beside the vectors, not a module of a package: loaded by its path
    path = os.path.join(ROOT, "src", "test", "vectors", "generate.py")
    spec = importlib.util.spec_from_file_location("generate", path)
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    generate.main(str(tmp_path))
    assert PARTIAL_SUMS
    for path in VECTORS + PARTIAL_SUMS:
        rel = os.path.relpath(path, os.path.join(ROOT, "src", "test", "vectors"))
        with open(path) as a, open(tmp_path / rel) as b:
            assert a.read() == b.read(), rel + " differs: rerun generate.py"


@pytest.mark.parametrize("path", VECTORS, ids=[os.path.basename(v) for v in VECTORS])
def test_model_reproduces_vector(path):
    with open(path) as f:
        v = json.load(f)
    task = nm.Task(v["task"], v["slotArray"], v["slots"], v["k"], v["rows"], v["payload"],
                   v["length"], v["coefficients"], v["premultiplied"])
    rebuilt = {}
    for n, e in enumerate(v["events"]):
        wire = bytes.fromhex(e["packet"])
        if e["from"] == "reader":
            out = task.on_ack(nm.Packet.decode(wire))
            got = [] if out is None else [out.encode().hex()]
        else:
            try:
                verdict, out = task.on_data(nm.Packet.decode(wire))
            except nm.Malformed:
                verdict, out = "MALFORMED", []
            assert verdict == e["verdict"], "event %d" % n
            got = [r.encode().hex() for r in out]
            for r in out:
                rebuilt.setdefault((r.sender, r.seq), r.payload)
        assert got == e["emit"], "event %d" % n
    assert task.finished
    for r, unit in enumerate(v["erasedUnits"]):
        stream = nm.stream_of((rebuilt[(r, q)] for q in range(task.stripes)), v["length"])
        assert stream.hex() == unit


@pytest.mark.parametrize("path", PARTIAL_SUMS, ids=[os.path.basename(v) for v in PARTIAL_SUMS])
def test_model_reproduces_two_levels(path):
    with open(path) as f:
        v = json.load(f)
    tasks = {}
    for level in ("child", "parent"):
        t = v[level]
        tasks[level] = nm.Task(t["task"], t["slotArray"], t["slots"], t["k"], 1, v["payload"],
                               v["length"], t["coefficients"])
    ln = v["link"]
    link = nm.ParentLink(ln["task"], ln["slotArray"], ln["sender"], ln["slots"], ln["window"])
    child = v["child"]
    rebuilt = {}
    for n, e in enumerate(v["events"]):
        p = nm.Packet.decode(bytes.fromhex(e["packet"]))
        task = tasks[e["at"]]
        if e["from"] == "survivor":
            verdict, out = task.on_data(p)
            assert verdict == e["verdict"], "event %d" % n
            if e["at"] == "parent":
                for r in out:
                    rebuilt.setdefault(r.seq, r.payload)
        elif e["from"] == "result":
            out = [link.as_data(p)]
        elif e["from"] == "reader":
            out = [task.on_ack(p)]
        else:  # the parent's ACK copy, the child's reader ACK
            out = [task.on_ack(link.as_child_ack(p, child["task"], child["slotArray"]))]
        assert [r.encode().hex() for r in out] == e["emit"], "event %d" % n
    assert tasks["parent"].finished and tasks["child"].finished
    stream = nm.stream_of((rebuilt[q] for q in range(tasks["parent"].stripes)), v["length"])
    assert stream.hex() == v["erasedUnits"][0]


def test_every_single_bit_flip_is_refused():
    p = nm.Packet(nm.DATA, 1, 2, 0, 0, 3, 3, 0, bytes(range(50))).encode()
    for bit in range(len(p) * 8):
        bad = bytearray(p)
        bad[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(nm.Malformed):
            nm.Packet.decode(bytes(bad))


def test_gf_and_rs_match_known_values():
    from netec_p4.model import gf256
    # Hadoop/ISA-L Cauchy row for RS(6,3) parity 0: 1/(6^j)
    assert gf256.encode_matrix(6, 3)[6] == [gf256.inv(6 ^ j) for j in range(6)]
    for x in range(1, 256):
        assert gf256.mul(x, gf256.inv(x)) == 1
    data = [bytes([i * 7 + j for j in range(5)]) for i in range(3)]
    parity = gf256.encode(data, 2)
    rows = gf256.decode_rows(3, 2, [1, 2, 3], [0])
    units = data + parity
    rebuilt = bytes(
        gf256._dot(rows[0], [units[s][x] for s in (1, 2, 3)]) for x in range(5))
    assert rebuilt == data[0]
