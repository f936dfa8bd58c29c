"""The P4 pipeline's model, driven by the control plane's real table entries, against the
shared vectors (rows = 1: what the compiled data plane supports) and the GF tables."""

import json
import os
import subprocess
import sys

import pytest

from netec_p4.control import netec_control as nc
from netec_p4.model import gf256
from netec_p4.model import netec_model as nm
from netec_p4.model import pipeline as pl
from netec_p4.testing.vectors import ONE_ROW, PREMULTIPLIED, readdressed, setup_of

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


def test_generated_gf_tables_are_what_the_generator_writes(child_env):
    gen = os.path.join(ROOT, "switch-p4", "p4src", "generated", "gen_gf_tables.py")
    assert subprocess.run([sys.executable, gen, "--check"], env=child_env).returncode == 0


def test_table_lookup_lanes_multiply_every_pair():
    for a in range(256):
        log_a = gf256.LOG[a] if a else pl.GF_LOG_ZERO
        for x in range(256):
            assert pl.gf_exp(pl.gf_log(x) + log_a) == gf256.mul(a, x), (a, x)


def test_config_p4_holds_the_models_constants():
    with open(os.path.join(ROOT, "switch-p4", "p4src", "include", "config.p4")) as f:
        text = f.read()
    for name, value in [("NETEC_TASKS", pl.TASKS), ("NETEC_SLOTS", pl.SLOTS),
                        ("NETEC_SENDERS", pl.SENDERS), ("NETEC_PAYLOAD", pl.PAYLOAD),
                        ("NETEC_PASS_BYTES", pl.PASS_BYTES),
                        ("NETEC_ROWS", pl.ROWS)]:
        assert "#define %s %d\n" % (name, value) in text, name
    with open(os.path.join(ROOT, "switch-p4", "p4src", "include", "headers.p4")) as f:
        assert "const bit<8> NETEC_VERSION = %d;" % nm.VERSION in f.read(), "protocol version"


@pytest.mark.parametrize("path", ONE_ROW, ids=[os.path.basename(v) for v in ONE_ROW])
def test_pipeline_reproduces_vector(path):
    with open(path) as f:
        v = json.load(f)
    p = pl.Pipeline()
    limits = nc.Limits(slots=v["slots"], payload=v["payload"])
    entries = nc.task_entries(v["task"], v["slotArray"], setup_of(v), limits,
                              ("198.18.0.100", 40003))
    nc.ModelBackend(p).add_task(v["task"], v["slotArray"], entries)
    rebuilt = {}
    for n, e in enumerate(v["events"]):
        wire = bytes.fromhex(e["packet"])
        verdict, out = p.netec(wire, e["from"] == "reader")
        if e["from"] != "reader":
            assert verdict == e["verdict"], "event %d" % n
        got = [r.encode().hex() for r in out]
        assert got == e["emit"], "event %d" % n
        for r in out:
            if r.type == 2:
                rebuilt.setdefault(r.seq, r.payload)
    stripes = (v["length"] + v["payload"] - 1) // v["payload"]
    assert nm.stream_of((rebuilt[q] for q in range(stripes)), v["length"]).hex() \
        == v["erasedUnits"][0]
    assert p.counters["recirculated"] >= stripes  # every aggregated packet took a pass a part


def test_concurrent_tasks_do_not_disturb_each_other():
    """Two one-row vectors at once in one pipeline, events interleaved: each task's packets
    are judged and emitted exactly as when it runs alone."""
    names = ["rs32-in-order.json", "rs63-one-row-faults.json"]
    vs = [json.load(open(os.path.join(ROOT, "src", "test", "vectors", n))) for n in names]
    places = [(3, 1), (9, 17)]
    p = pl.Pipeline()
    for v, (task, array) in zip(vs, places):
        limits = nc.Limits(slots=v["slots"], payload=v["payload"])
        entries = nc.task_entries(task, array, setup_of(v), limits, ("198.18.0.100", 40000 + task))
        nc.ModelBackend(p).add_task(task, array, entries)
    cursors = [0, 0]
    while any(c < len(v["events"]) for c, v in zip(cursors, vs)):
        for i, (v, (task, array)) in enumerate(zip(vs, places)):
            if cursors[i] >= len(v["events"]):
                continue
            e = v["events"][cursors[i]]
            cursors[i] += 1
            verdict, out = p.netec(readdressed(e["packet"], task, array), e["from"] == "reader")
            if e["from"] != "reader":
                assert verdict == e["verdict"], (v["name"], cursors[i] - 1)
            assert [r.encode() for r in out] == [readdressed(x, task, array) for x in e["emit"]]


@pytest.mark.parametrize("path", PREMULTIPLIED, ids=[os.path.basename(v) for v in PREMULTIPLIED])
def test_a_multiplying_data_plane_refuses_a_premultiplied_task_at_setup(path):
    with open(path) as f:
        v = json.load(f)
    cp = nc.ControlPlane(nc.ModelBackend(pl.Pipeline()), nc.Limits(), "198.18.0.100")
    with pytest.raises(nc.Refused, match="premultiplied: true not supported"):
        cp.setup(setup_of(v))

