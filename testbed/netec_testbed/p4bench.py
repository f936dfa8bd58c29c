"""bin/netec-bench bmv2-testbed: reconstruction through BMv2 between real Hadoop daemons.

A testbed whose fabric is BMv2 (p4fabric.py: simple_switch running the datagram XOR program,
the P4 control plane on the switch host) rebuilds a lost internal block twice, once per route,
over the same fabric: through the P4 switch (survivors' pre-multiplied datagrams XORed in
BMv2's registers) and through Hadoop's native reconstruction (k TCP streams into the rebuilding
DataNode, forwarded by the same P4 program's l3_forward). Every rebuilt block is compared byte
for byte with the dead DataNode's copy. Prints a markdown table: bytes rebuilt, the task's
time, its rate, the ratio to native in the same run, and the DATA packets BMv2 aggregated per
second (its verdict counters).

BMv2 is a software model of a switch, interpreting the program packet by packet: its rates say
nothing of a Tofino's. Correctness through a real P4 pipeline is the point.
Needs root and the P4 toolchain (README.md, P4 toolchain).
"""

import argparse
import sys

from . import p4fabric, scenario
from .cluster import Config, Testbed
from .net import TestbedError

V_AGGREGATE, V_COMPLETE = 5, 6  # switch-p4/p4src/include/netec_logic.p4


def run_route(tb, route, size, seed):
    """One loss rebuilt with ROUTE first; returns (outcome, DATA packets BMv2 counted)."""
    tb.restart_datanodes(route_order=route if route == "native" else route + ",native",
                         revive=True)
    before = tb.p4_counters()
    files = scenario.Files(tb, "/p4bench/" + route, "NETEC-3-2-1024k", 1, size,
                           seed=seed).write()
    o = scenario.lose_and_rebuild(tb, files)
    after = tb.p4_counters()
    files.verify()
    files.remove()
    data = sum(after[i] - before[i] for i in (V_AGGREGATE, V_COMPLETE))
    return o, data


def main(argv=None):
    p = argparse.ArgumentParser(prog="netec-bench bmv2-testbed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kib", type=int, default=3 * 1024,
                   help="file size in KiB, one RS(3,2) group of 1 MiB cells (default 3072)")
    p.add_argument("--prefix", default="ntq")
    a = p.parse_args(argv)
    reason = p4fabric.missing()
    if reason:
        print("SKIP bmv2-testbed: " + reason)
        return 0
    tb = Testbed(Config(prefix=a.prefix, fabric="bmv2", datanodes=6, block_size=1 << 20,
                        route_order="switch,native", route_timeout_ms=30000,
                        hdfs={"dfs.namenode.reconstruction.pending.timeout-sec": "120"}))
    tb.down()
    rows = []
    try:
        tb.up(progress=lambda m: print(m, file=sys.stderr, flush=True))
        for i, route in enumerate(("native", "switch")):
            o, data = run_route(tb, route, a.kib * 1024, seed=70 + i)
            print("%s: %s" % (route, scenario.describe(o)), file=sys.stderr, flush=True)
            if not o.all_equal or set(o.served_by) != {route}:
                raise TestbedError("%s: rebuilt blocks differ or another route served: %s"
                                   % (route, o.tasks))
            rows.append((route, o, data))
    finally:
        tb.down()
    native = rows[0][1].rate
    print("| route (BMv2 fabric) | tasks | rebuilt KiB | window s | KB/s | vs native | "
          "DATA packets aggregated by BMv2 | per s | bytes match |")
    print("|---|---|---|---|---|---|---|---|---|")
    for route, o, data in rows:
        print("| %s | %d | %.0f | %.2f | %.1f | %.2fx | %d | %.0f | yes |" % (
            route, len(o.tasks), o.bytes / 1024, o.window_s, o.rate / 1e3,
            o.rate / native if native else 0, data, data / o.window_s if o.window_s else 0))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except TestbedError as e:
        print("netec-bench bmv2-testbed: %s" % e, file=sys.stderr)
        sys.exit(1)
