"""The switch-p4 control plane serving docs/protocol.md's control endpoint over TCP, writing
its table entries into the pipeline model; and the model's one-to-many TCP proxy (scapy):
handshake, SEQ/ACK translation, aggregation of real RS stripes into RESULT segments, EBSN."""

import pytest

from netec_p4.control import netec_control as nc
from netec_p4.model import gf256
from netec_p4.model import pipeline as pl

# the TCP proxy's scenario builds its packets with scapy: without it the module is skipped
pytest.importorskip("scapy.layers.inet")
from netec_p4.testing.proxy import Endpoint, proxy_scenario, setup_request  # noqa: E402


@pytest.fixture
def ep():
    e = Endpoint()
    yield e
    e.close()


def test_setup_answers_and_installs_entries(ep):
    req, _ = setup_request()
    a = ep.ask(req)
    assert a["ok"] and a["slots"] == pl.SLOTS and a["vip"] == "198.18.0.100:%d" % (40000 + a["task"])
    cfg = ep.pipe.lookup("task_cfg", (a["task"], a["slotArray"]))
    assert cfg[1]["k_mask"] == 0b111 and cfg[1]["stripes"] == 4 and cfg[1]["last_len"] == 8
    assert len(ep.pipe.mcast[a["task"] + 1]) == 3
    for s in range(3):
        c = ep.pipe.lookup("sender_coeff", (a["task"], s))[1]
        want = req["coefficients"][0][s]
        assert c["log_a"] == (gf256.LOG[want] if want else 511) and c["bit_s"] == 1 << s
    assert len(a["secret"]) == 32 and int(a["secret"], 16) >= 0  # 128 bits, hex
    # only the reader that set the task up can tear it down: others see no such task
    for forged in ({"op": "teardown", "task": a["task"]},
                   {"op": "teardown", "task": a["task"], "secret": "0" * 32},
                   {"op": "teardown", "task": a["task"], "secret": 7}):
        assert ep.ask(forged) == {"ok": False, "reason": "no task %d" % a["task"]}
    assert ep.pipe.lookup("task_cfg", (a["task"], a["slotArray"])) is not None
    assert ep.ask({"op": "teardown", "task": a["task"], "secret": a["secret"]}) == {"ok": True}
    assert ep.pipe.lookup("task_cfg", (a["task"], a["slotArray"])) is None
    assert ep.pipe.mcast[a["task"] + 1] == []
    assert ep.ask({"op": "teardown", "task": a["task"], "secret": a["secret"]}) == {
        "ok": False, "reason": "no task %d" % a["task"]}
    b = ep.ask(req)
    assert b["ok"] and b["secret"] != a["secret"], "a fresh secret per task"


def test_agents_outside_the_agent_networks_are_refused(ep):
    req, _ = setup_request()
    for bad in ("203.0.113.7", "169.254.169.254", "127.0.0.1"):
        req["survivors"][1]["agent"] = bad + ":50300"
        a = ep.ask(req)
        assert a == {"ok": False, "reason": "survivors[1].agent: %s is outside the agent "
                     "networks [198.18.0.0/15] (--agent-networks)" % bad}
    assert nc.parse_networks("198.18.0.0/15, 198.19.0.0/16")[1].prefixlen == 16
    with pytest.raises(ValueError, match="'nope' is not ADDRESS/PREFIX"):
        nc.parse_networks("nope")


@pytest.mark.parametrize("change,reason", [
    ({"payload": 128}, "payload size 128 not supported (this switch: 64)"),
    ({"payload": 100}, "payload: must be a multiple of 64"),
    ({"payload": 65536}, "payload: must be an integer in 64..65472"),
    ({"payload": 4294967360}, "payload: must be an integer in 64..65472"),
    ({"version": 2}, "version: 2 not supported (this switch: 3)"),
    ({"transport": "udp"}, "transport: 'udp' not supported (this switch: \"tcp\")"),
    ({"length": 64 << 31}, "length 137438953472 not supported: more than 2147483647 stripes "
                           "of 64 bytes"),
    ({"k": 0}, "k: must be an integer in 1..16"),
    ({"timeoutMs": 5}, "timeoutMs: must be an integer in 100..600000"),
    ({"coefficients": [[1, 2]]}, "coefficients: must be rows x k integers 0..255"),
    ({"survivors": []}, "survivors: must list exactly k=3 entries"),
])
def test_bad_setups_are_refused_naming_the_field(ep, change, reason):
    req, _ = setup_request()
    req.update(change)
    assert ep.ask(req) == {"ok": False, "reason": reason}


def test_two_rows_and_unknown_ops_and_junk_are_refused(ep):
    req, _ = setup_request(erased=(1, 4))
    assert ep.ask(req) == {"ok": False, "reason": "rows 2 not supported (this switch: 1)"}
    assert ep.ask({"op": "dance"})["reason"] == "op: unknown operation 'dance'"
    assert ep.ask(b"{not json")["reason"] == "request: not a JSON object"
    # a bare setup is refused and the connection still serves
    assert ep.ask({"op": "setup", "version": nc.VERSION})["ok"] is False


def test_slot_arrays_run_out_and_are_reused_clean():
    e = Endpoint(nc.Limits(tasks=2))
    try:
        req, _ = setup_request()
        a1, a2 = e.ask(req), e.ask(req)
        assert a1["ok"] and a2["ok"] and a1["task"] != a2["task"]
        assert e.ask(req) == {"ok": False, "reason": "no free slot array"}
        e.pipe.ack_seq.cells[a1["task"]] = 3  # state of a finished task ...
        e.pipe.slot_bits.cells[a1["slotArray"] * pl.SLOTS + 5] = 0b101
        assert e.ask({"op": "teardown", "task": a1["task"], "secret": a1["secret"]})["ok"]
        a3 = e.ask(req)
        assert a3["ok"] and a3["task"] == a1["task"]  # ... is gone when the id is reused
        assert e.pipe.ack_seq.cells[a3["task"]] == 0
        assert e.pipe.slot_bits.cells[a3["slotArray"] * pl.SLOTS + 5] == 0
    finally:
        e.close()


def test_idle_and_finished_tasks_expire():
    e = Endpoint()
    try:
        req, _ = setup_request()
        req["timeoutMs"] = 100
        a = e.ask(req)
        e.cp.expire(now=1e12)  # no progress for ages
        assert a["task"] not in e.cp.tasks
        b = e.ask(setup_request()[0])
        e.pipe.ack_seq.cells[b["task"]] = 4  # the reader has every stripe
        e.cp.expire()
        assert b["task"] not in e.cp.tasks
    finally:
        e.close()


# ---- the TCP proxy -------------------------------------------------------------------------

def test_handshake_translation_aggregation_and_ebsn(ep):
    proxy_scenario(ep)  # netec_p4.testing.proxy: BMv2 runs the same (test_p4_toolchain.py)
