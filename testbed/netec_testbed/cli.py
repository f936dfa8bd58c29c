"""bin/netec-testbed: up | status | down | demo | exec | hdfs.

  up      builds the plugin, starts the hosts and daemons, adds and enables the NETEC policies
  status  hosts, addresses, daemons (running or dead), logs, link shaping
  down    ends every process in the testbed's namespaces, removes them, the management port
          and the run dir (also after a crash: it finds them by prefix)
  demo    up (with --datanodes/--link as given), then for each route in turn (switch, inec,
          native): DataNodes restarted with that route order, NETEC-6-3 files written, the
          DataNode holding most of their blocks killed with kill -9, every lost block rebuilt
          and compared byte for byte with the dead DataNode's copy; prints a table; down.
          Exit status 0 only if every byte matched and each route served its tasks.
  soak    up, then the chaos soak (soak.py) for --minutes: clients write, read and delete
          NETEC-3-2 and NETEC-6-3 files while DataNodes are killed (and a second one during a
          repair), the switch restarted and links cut, from --seed's schedule; every file
          checked at the end (and every --checkpoint-minutes); a report (markdown and PNG) in
          --report-dir; down. Exit status 0 only if nothing was lost and every check passed.
  exec [--prefix P] HOST -- CMD [ARGS...]
          runs CMD in HOST's namespace (nn, sw, cl, dn01, ...) with that host's Hadoop
          configuration (HADOOP_CONF_DIR) and `hdfs` on PATH; exits with CMD's status
  hdfs [--prefix P] SUBCOMMAND [ARGS...]
          `hdfs` on the client host: dfs, ec, fsck, debug, dfsadmin, getconf, version, as
          Hadoop's own command runs them (the client's fs.hdfs.impl is the plugin's client)
"""

import argparse
import signal
import sys

from . import scenario
from .cluster import Config, Testbed
from .net import TestbedError


def _config(a):
    return Config(prefix=a.prefix, fabric=a.fabric, datanodes=a.datanodes, link=a.link, delay_us=a.delay_us,
                  loss=a.loss, shape_switch=a.shape_switch, hadoop=a.hadoop,
                  block_size=a.block_mb << 20, run_dir=a.run_dir, jvm_options=a.jvm_option,
                  racks=a.racks, oversubscription=a.oversubscription, rack_switch=a.rack_switch)


def parser():
    p = argparse.ArgumentParser(prog="netec-testbed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["up", "status", "down", "demo", "soak"])
    p.add_argument("--prefix", default="ntb", help="namespace prefix (default ntb)")
    p.add_argument("--run-dir", default=None, help="logs, confs, data (default /tmp/netec-testbed-PREFIX)")
    p.add_argument("--datanodes", type=int, default=12, help="DataNodes (default 12)")
    p.add_argument("--fabric", default="bridge", choices=["bridge", "bmv2"],
                   help="what joins the hosts: a Linux bridge (default) or BMv2 simple_switch "
                        "running switch-p4's datagram XOR program, with the P4 control plane "
                        "on the switch host (needs the P4 toolchain: README.md)")
    p.add_argument("--link", default=None, help="rate of every host link, both ways: 100mbit, 1gbit, ... (default unshaped)")
    p.add_argument("--racks", type=int, default=0,
                   help="racks of DataNodes (2..16), each a bridge of its own joined to a spine "
                        "by a shaped uplink; Hadoop's rack awareness by a topology script "
                        "(default: one flat fabric)")
    p.add_argument("--oversubscription", type=float, default=1.0,
                   help="with --racks: a rack's host links together over its uplink's rate "
                        "(e.g. 4 for 1:4; default 1; needs --link)")
    p.add_argument("--rack-switch", default="java", choices=["java", "bmv2"],
                   help="with --racks: each rack's switch, the software switch (default) or "
                        "BMv2 one-armed on the rack's bridge running switch-p4's datagram XOR "
                        "program, its P4 control plane on the rack's switch host: partial sums "
                        "from one P4 switch to another (needs the P4 toolchain: README.md)")
    p.add_argument("--delay-us", type=int, default=0, help="one-way delay per link (needs tc netem)")
    p.add_argument("--loss", type=float, default=0.0, help="loss in percent per link (needs tc netem)")
    p.add_argument("--shape-switch", action="store_true",
                   help="shape the software switch's host too (by default it stands for a switch ASIC)")
    p.add_argument("--hadoop", default="3.4.3", choices=["3.4.3", "3.5.0"])
    p.add_argument("--block-mb", type=int, default=8, help="internal block size in MiB (default 8)")
    p.add_argument("--jvm-option", action="append", default=[], metavar="OPT",
                   help="an extra JVM option of every daemon (repeatable)")
    p.add_argument("--keep", action="store_true",
                   help="demo, soak: leave the testbed up afterwards")
    p.add_argument("--minutes", type=float, default=3, help="soak: how long (default 3)")
    p.add_argument("--seed", type=int, default=1, help="soak: the fault schedule's seed")
    p.add_argument("--checkpoint-minutes", type=float, default=None,
                   help="soak: check every file this often too (default: at the end only)")
    p.add_argument("--report-dir", default="soak-report",
                   help="soak: where soak-report.md and .png go (default ./soak-report)")
    return p


def _interrupted(signum, frame):
    raise KeyboardInterrupt()


def operator_command(argv):
    """exec and hdfs: ARGV from the command word on. Returns the command's exit status."""
    what, rest = argv[0], list(argv[1:])
    prefix = "ntb"
    if rest[:1] == ["--prefix"] and len(rest) > 1:
        prefix, rest = rest[1], rest[2:]
    if what == "hdfs":
        host, cmd = "cl", ["hdfs"] + rest
    else:
        if len(rest) < 3 or rest[1] != "--":
            raise TestbedError("usage: netec-testbed exec [--prefix P] HOST -- CMD [ARGS...]")
        host, cmd = rest[0], rest[2:]
    tb, found = Testbed.attach(prefix)
    if not found:
        raise TestbedError("no testbed with prefix %s is up: `bin/netec-testbed up%s` first"
                           % (prefix, "" if prefix == "ntb" else " --prefix " + prefix))
    return tb.exec_command(host, cmd).returncode


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["exec"], ["hdfs"]):
        try:
            return operator_command(argv)
        except TestbedError as e:
            print("netec-testbed: %s" % e, file=sys.stderr)
            return 2
    a = parser().parse_args(argv)
    # A kill (SIGTERM) ends in the same clean-up as Ctrl-C.
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        if a.command == "up":
            tb = Testbed(_config(a))
            tb.up()
            print(tb.status())
            print("testbed: `bin/netec-testbed down%s` removes it" % (
                "" if a.prefix == "ntb" else " --prefix " + a.prefix))
        elif a.command == "status":
            tb, found = Testbed.attach(a.prefix, a.run_dir)
            if not found:
                left = tb.leftovers()
                print("no testbed with prefix %s%s" % (a.prefix, "; leftovers: " + ", ".join(left)
                                                        if left else ""))
                return 1
            print(tb.status())
        elif a.command == "down":
            tb, _ = Testbed.attach(a.prefix, a.run_dir)
            tb.down()
            print("testbed %s: down" % a.prefix)
        elif a.command == "demo":
            return demo(a)
        elif a.command == "soak":
            return soak_command(a, argv)
    except TestbedError as e:
        print("netec-testbed: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("netec-testbed: interrupted", file=sys.stderr)
        if a.command in ("up", "demo", "soak"):
            Testbed.attach(a.prefix, a.run_dir)[0].down()
        return 130
    return 0


def demo(a):
    tb = Testbed(_config(a))
    try:
        tb.up()
        print(tb.status())
        return 0 if scenario.demo_routes(tb) else 1
    finally:
        if not a.keep:
            tb.down()


def soak_command(a, argv):
    from . import soak
    tb = Testbed(_config(a))
    try:
        tb.up()
        s = soak.Soak(tb, a.seed)
        passed = s.run(a.minutes, a.checkpoint_minutes)
        print(soak.report(s, "bin/netec-testbed " + " ".join(argv), a.report_dir))
        print("soak: report in %s/soak-report.md and .png" % a.report_dir)
        return 0 if passed else 1
    finally:
        if not a.keep:
            tb.down()


if __name__ == "__main__":
    sys.exit(main())
