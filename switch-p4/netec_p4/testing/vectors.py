"""The shared test vectors (src/test/vectors, one switch task each; the Java switch's suite
replays the same files) as the pipeline model's suite and BMv2's take them: which of them the
compiled data plane runs, a vector's setup as the control plane parses it, and its packets
re-addressed to another task."""

import glob
import json
import os

import netec_p4
from netec_p4.control import netec_control as nc
from netec_p4.model import netec_model as nm

DIR = os.path.join(os.path.dirname(netec_p4.SWITCH_P4), "src", "test", "vectors")
PATHS = sorted(glob.glob(os.path.join(DIR, "*.json")))
# what the compiled data plane runs: one row, multiplied by the switch
ONE_ROW = [v for v in PATHS if json.load(open(v))["rows"] == 1
           and not json.load(open(v))["premultiplied"]]
PREMULTIPLIED = [v for v in PATHS if json.load(open(v))["premultiplied"]]


def setup_of(v):
    survivors = [{"sender": s, "agent": "198.18.1.%d:50300" % (s + 1), "block": "b%d" % s,
                  "unitLength": v["length"], "token": ""} for s in range(v["k"])]
    return nc.parse_setup({"version": nc.VERSION, "group": v["name"], "k": v["k"],
                           "rows": v["rows"], "payload": v["payload"], "length": v["length"],
                           "timeoutMs": 1000,
                           "survivors": survivors, "coefficients": v["coefficients"],
                           "premultiplied": v["premultiplied"]})


def readdressed(hexwire, task, array):
    """A vector packet re-addressed to another task and slot array (checksum redone)."""
    wire = bytes.fromhex(hexwire)
    try:
        p = nm.Packet.decode(wire)
    except nm.Malformed:
        return wire  # malformed packets stay as they are (and stay dropped)
    p.task, p.array = task, array
    return p.encode()
