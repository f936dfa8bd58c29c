"""The P4 sources against the control plane and each other. No P4 compiler is available here,
so these checks are what can be held without one: every table entry the control plane writes
names a table, key fields, an action and parameters that both programs declare, with values
that fit the declared widths; the registers the backends clear exist; the programs' includes
resolve, their brackets balance, and the generated files are the generators' output."""

import os
import re
import subprocess
import sys

import pytest

from netec_p4.control import backends
from netec_p4.control import netec_control as nc
from netec_p4.model import pipeline as pl

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
P4 = os.path.join(ROOT, "switch-p4", "p4src")

PROGRAMS = {"v1model": os.path.join(P4, "v1model", "netec.p4"),
            "tna": os.path.join(P4, "tna", "netec.p4")}
# the datagram XOR program (pre-multiplied survivors): the same checks
XOR_PROGRAMS = {"v1model": os.path.join(P4, "v1model", "netec_xor.p4"),
                "tna": os.path.join(P4, "tna", "netec_xor.p4")}
WIDTH = {"PortId_t": 9}


def read(path):
    with open(path) as f:
        return f.read()


def read_program(path, seen=None):
    """A program's text with its own includes ("...", not <...>) in place, each file once: the
    programs keep their controls in files of their own (p4src/v1model/common/, xor/)."""
    seen = set() if seen is None else seen
    path = os.path.normpath(path)
    if path in seen:
        return ""
    seen.add(path)
    return re.sub(r'#include "([^"]+)"',
                  lambda m: read_program(os.path.join(os.path.dirname(path), m.group(1)), seen),
                  read(path))


def declarations(text):
    """Tables (key fields by short name) and actions (param name -> bit width)."""
    tables = {}
    for m in re.finditer(r"\btable (\w+) \{(.*?)\n    \}", text, re.S):
        key = re.search(r"key = \{(.*?)\}", m.group(2), re.S)
        fields = re.findall(r"([\w.]+) : (?:exact|lpm|ternary)", key.group(1)) if key else []
        tables[m.group(1)] = [f.split(".")[-1] for f in fields]
    actions = {}
    for m in re.finditer(r"\baction (\w+)\(([^)]*)\)", text):
        params = {}
        for p in filter(None, (x.strip() for x in m.group(2).split(","))):
            typ, name = p.rsplit(" ", 1)
            w = re.match(r"bit<(\d+)>", typ)
            params[name] = int(w.group(1)) if w else WIDTH[typ]
        actions[m.group(1)] = params
    return tables, actions


def sample_entries(program="netec"):
    limits = nc.Limits.of_program(program)
    req = {"version": nc.VERSION, "group": "g", "k": 6, "rows": 1, "payload": limits.payload,
           "length": 1000, "timeoutMs": 1000, "coefficients": [[0, 1, 2, 3, 200, 255]],
           "transport": limits.transport, "premultiplied": limits.premultiplied,
           "survivors": [{"sender": s, "agent": "198.18.1.%d:50300" % (s + 1), "block": "b",
                          "unitLength": 1000, "token": ""} for s in range(6)]}
    return nc.task_entries(31, 31, nc.parse_setup(req), limits, ("198.18.0.100", 40031),
                           0xFFFFFFFF, {"198.18.1.1": 0xFFFFFFFFFFFF}, "f" * 32)


# every program and architecture: (program, arch) -> its source
SOURCES = {("netec", arch): path for arch, path in PROGRAMS.items()}
SOURCES.update({("netec_xor", arch): path for arch, path in XOR_PROGRAMS.items()})
# the tables a task's entries and the routes fill, by program
FILLED = {"netec": {"task_cfg", "vip_in", "sender_coeff", "survivor_in", "replica",
                    "l3_forward", "l3_to_reader", "l3_agent_to_reader", "reader_secret"},
          "netec_xor": {"vip_in", "survivor_in", "replica", "l3_forward", "l3_to_reader",
                        "l3_agent_to_reader", "reader_secret"}}


@pytest.mark.parametrize("program,arch", sorted(SOURCES))
def test_every_entry_fits_the_program(program, arch):
    tables, actions = declarations(read_program(SOURCES[(program, arch)]))
    entries, group = sample_entries(program)
    entries = entries + backends.route_entries({"198.18.1.1": (2, 0x020000010002)},
                                               backends.PROGRAMS[program].route_tables)
    seen = set()
    for e in entries:
        assert e.table in tables, "%s has no table %s" % (arch, e.table)
        assert [k.split(".")[-1] for k in e.key] == tables[e.table], e
        assert e.action in actions, "%s has no action %s" % (arch, e.action)
        params = actions[e.action]
        assert set(e.params) == set(params), (e, params)
        for name, value in e.params.items():
            assert 0 <= value < 1 << params[name], (e.action, name, value)
        seen.add(e.table)
    assert seen == FILLED[program]
    assert group[1] == 32 and len(group[2]) == 6


@pytest.mark.parametrize("program,arch", sorted(SOURCES))
def test_registers_the_backends_clear_exist(program, arch):
    text = read_program(SOURCES[(program, arch)])
    declared = set(re.findall(r"register<bit<\d+>>\([^)]*\)\s+(\w+);", text))
    declared |= set(re.findall(r"Register<[\w<>, ]+>\([^;]*\) (\w+);", text))
    declared |= {"sum%d" % i for i in range(16)} if "SUM_REGISTER(15" in text else set()
    pr = backends.PROGRAMS[program]
    for name in (pr.task_registers + pr.slot_registers + pr.sender_registers
                 + pr.egress_task_registers):
        assert name in declared, "%s: no register %s" % (arch, name)


def test_backend_constants_are_config_p4s():
    assert backends.SLOTS == pl.SLOTS and backends.SENDERS == pl.SENDERS


@pytest.mark.parametrize("path", sorted(
    [os.path.join(d, f) for d, _, fs in os.walk(P4) for f in fs if f.endswith(".p4")]))
def test_sources_are_well_formed(path):
    text = read(path)
    code = re.sub(r"//.*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
    for a, b in ["()", "{}", "[]"]:
        assert code.count(a) == code.count(b), "%s: unbalanced %s%s" % (path, a, b)
    for inc in re.findall(r'#include "([^"]+)"', text):
        assert os.path.exists(os.path.join(os.path.dirname(path), inc)), inc


def test_generated_p4_is_what_the_generators_write(child_env):
    for gen in ["gen_gf_tables.py", "gen_lanes.py", "gen_halves.py"]:
        path = os.path.join(P4, "generated", gen)
        run = subprocess.run([sys.executable, path, "--check"], env=child_env)
        assert run.returncode == 0, gen


class Recorder:
    """bfrt_python's object tree, recording calls: what BfrtBackend asks of a Tofino."""

    def __init__(self, log, path=""):
        self._log, self._path = log, path

    def __getattr__(self, name):
        return Recorder(self._log, self._path + "." + name if self._path else name)

    def __call__(self, **kw):
        self._log.append((self._path, kw))


# what each program's bfrt backend must also write: the registers a reused task id finds
# clear, and the datagram program's ackSeq beside its bound (1000 bytes: 4 stripes of 256)
BFRT_WRITES = {
    "netec": [("netec.pipe.Ingress.slot_seq.mod", None), ("netec.pipe.Egress.isn_delta.mod", None)],
    "netec_xor": [("netec_xor.pipe.Ingress.slot_seq.mod", None),
                  ("netec_xor.pipe.Ingress.ack_seq.mod", {"REGISTER_INDEX": 31, "lo": 0, "hi": 4}),
                  ("netec_xor.pipe.Egress.max_started_plus1.mod", None),
                  ("netec_xor.pipe.Egress.slot_completes.mod", None)],
}


@pytest.mark.parametrize("program", sorted(BFRT_WRITES))
def test_bfrt_backend_speaks_the_tna_programs_names(program):
    log = []
    b = backends.BfrtBackend(bfrt=Recorder(log), program=program,
                             ports={"198.18.1.%d" % (s + 1): 8 + s for s in range(6)})
    entries = sample_entries(program)
    b.add_task(31, 31, entries)
    tables, actions = declarations(read_program(SOURCES[(program, "tna")]))
    adds = [(p, kw) for p, kw in log if ".add_with_" in p]
    assert len(adds) == len(entries[0])
    for path, kw in adds:
        control, table, call = path.split(".")[-3:]
        action = call[len("add_with_"):]
        assert control == ("Egress" if table == "replica" else "Ingress")
        assert set(kw) == set(tables[table]) | set(actions[action]), (path, kw)
    for path, kw in BFRT_WRITES[program]:
        assert any(p == path and (kw is None or k == kw) for p, k in log), (path, kw)
    assert ("pre.mgid.add", ) == tuple(p for p, _ in log if p == "pre.mgid.add")
    assert sum(1 for p, _ in log if p == "pre.node.add") == 6


def test_p4runtime_values_are_canonical():
    assert backends.canonical(0, 9) == b"\0"
    assert backends.canonical(0x1FF, 9) == b"\x01\xff"
    assert backends.canonical(0x00AB, 16) == b"\xab"
    with pytest.raises(ValueError):
        backends.canonical(512, 9)


def test_objects_are_found_by_their_short_name_and_a_shared_one_names_none():
    """The backends find a table, register or counter by the last component of its name (the
    controls' instance names come before it); a name several objects share, as MultiplyPass's
    sixteen log_table copies do, is refused naming them, never one of them picked."""
    names = backends.ByShortName()
    names.add("NetecIngress.acks.ack_seq", 1)
    names.add("NetecIngress.sums.multiply.log0.log_table", 2)
    names.add("NetecIngress.sums.multiply.log1.log_table", 3)
    assert names["ack_seq"] == 1 and "ack_seq" in names
    assert "log_table" not in names and "slot_seq" not in names
    with pytest.raises(KeyError, match="log0.log_table.*log1.log_table"):
        names["log_table"]
    with pytest.raises(KeyError, match="nothing named slot_seq"):
        names["slot_seq"]
