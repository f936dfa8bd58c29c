"""The testbed's pieces that need no root: link rates, the daemons' merged configuration
(the plugin's conf/ snippets under each host's own keys, as an operator merges them), and the
command lines it runs."""

import os

import pytest

from netec_testbed import Config, Testbed, TestbedError, containers, hadoop, net


def test_link_rates_parse_or_name_the_bad_value():
    assert net.rate_bits("100mbit") == 100_000_000
    assert net.rate_bits("1gbit") == 1_000_000_000
    assert net.rate_bits("400Mbit") == 400_000_000
    assert net.rate_bits("10mbps") == 80_000_000
    with pytest.raises(TestbedError, match="fast"):
        net.rate_bits("fast")


def test_conf_merges_the_plugin_snippets_under_the_hosts_keys(tmp_path):
    d = tmp_path / "conf"
    hadoop.write_conf(str(d), {"fs.defaultFS": "hdfs://198.18.100.2:8020"},
                      {"netec.route.order": "inec,native", "dfs.blocksize": "4194304"})
    core = hadoop.read_properties(str(d / "core-site.xml"))
    hdfs = hadoop.read_properties(str(d / "hdfs-site.xml"))
    snippet = hadoop.read_properties(os.path.join(hadoop.REPO, "conf", "hdfs-site-netec.xml"))
    # Every key of the operator's snippet is there; the host's own values win.
    assert set(snippet) <= set(hdfs)
    assert hdfs["dfs.datanode.plugins"] == "io.netec.hdfs.datanode.NetecDataNodePlugin"
    assert hdfs["netec.route.order"] == "inec,native"
    assert core["fs.defaultFS"] == "hdfs://198.18.100.2:8020"
    assert "io.erasurecode.codec.netec.rawcoders" in core
    assert "log4j.appender.out.Target=System.err" in (d / "log4j.properties").read_text()


def test_hosts_addresses_and_settings():
    tb = Testbed(Config(datanodes=4, run_dir="/nonexistent"))
    assert tb.hosts() == ["nn", "sw", "cl", "dn01", "dn02", "dn03", "dn04"]
    assert tb.ip("nn") == "198.18.100.2" and tb.ip("dn04") == "198.18.100.14"
    assert tb.host_of("198.18.100.12:9866") == "dn02"
    # Only the benchmarking range 198.18.0.0/15.
    assert all(tb.ip(h).startswith("198.18.") for h in tb.hosts())
    with pytest.raises(TestbedError):
        tb.host_of("198.18.0.1:9866")
    with pytest.raises(TypeError, match="unknown testbed setting"):
        Config(datanodez=3)
    with pytest.raises(TestbedError, match="--datanodes"):
        Config(datanodes=1)
    with pytest.raises(TestbedError, match="too long"):
        net.Fabric("a-very-long-prefix").port("dn01")


def test_java_command_puts_the_conf_dir_first_on_the_classpath():
    cmd = hadoop.java_command("/c", "/jar:/hadoop.jar", hadoop.DATANODE, ["-x"], tmp="/t")
    assert cmd[cmd.index("-cp") + 1] == "/c:/jar:/hadoop.jar"
    assert "-Djava.io.tmpdir=/t" in cmd
    assert cmd[-2:] == [hadoop.DATANODE, "-x"]


def test_container_network_takes_the_first_free_subnet():
    # a network left by a crashed run holds the default /24: the next cluster takes another
    assert containers.free_subnet(["198.18.250.0/24", "fd00::/64"]) == "198.18.60.0/24"
    assert containers.free_subnet(["198.18.60.0/24", "198.18.61.0/25"]) == "198.18.62.0/24"
    with pytest.raises(TestbedError, match="no free /24"):
        containers.free_subnet(["198.18.0.0/15"])


def test_the_hdfs_command_maps_hadoops_subcommands(tmp_path):
    """The `hdfs` that `exec` puts on PATH: each subcommand runs its Hadoop main class over
    the testbed's classpath and the host's configuration; an unknown one names the others."""
    import subprocess
    script = tmp_path / "hdfs"
    script.write_text(hadoop.hdfs_script())
    script.chmod(0o755)
    fake_java = tmp_path / "jdk" / "bin" / "java"
    fake_java.parent.mkdir(parents=True)
    fake_java.write_text("#!/bin/sh\nprintf '%s\\n' \"$@\"\n")  # prints its arguments
    fake_java.chmod(0o755)
    env = dict(os.environ, JAVA_HOME=str(tmp_path / "jdk"), HADOOP_CONF_DIR="/c/conf",
               NETEC_TESTBED_CLASSPATH="/a.jar:/b.jar", NETEC_TESTBED_BIN="/c/bin",
               NETEC_TESTBED_TMP="/c/tmp")
    for sub, main in hadoop.HDFS_SUBCOMMANDS.items():
        out = subprocess.run([str(script), sub, "-x", "a b"], env=env, text=True,
                             stdout=subprocess.PIPE, check=True).stdout.splitlines()
        assert out[-3:] == [main, "-x", "a b"], out
        assert out[out.index("-cp") + 1] == "/c/conf:/a.jar:/b.jar"
        assert "-Djava.io.tmpdir=/c/tmp" in out
    bad = subprocess.run([str(script), "nosuch"], env=env, text=True,
                         stderr=subprocess.PIPE)
    assert bad.returncode == 2 and "dfs" in bad.stderr and "fsck" in bad.stderr


def test_exec_and_hdfs_name_what_is_wrong(capsys):
    from netec_testbed import cli
    assert cli.main(["exec", "--prefix", "ntq", "dn01"]) == 2
    assert "usage: netec-testbed exec" in capsys.readouterr().err
    assert cli.main(["hdfs", "--prefix", "ntq", "dfs", "-ls", "/"]) == 2
    assert "no testbed with prefix ntq is up" in capsys.readouterr().err
    with pytest.raises(TestbedError, match="no host zz"):
        Testbed(Config(prefix="ntq")).exec_command("zz", ["true"])


def test_reads_during_reconstruction_compare_with_their_neighbours():
    from netec_testbed import reads
    # client, start, ms, via: the load doubles halfway, and the plugin's reads track it
    window = [["hadoop", 0, 500.0, "hadoop"], ["cost", 1, 250.0, "switch"],
              ["hadoop", 2, 500.0, "hadoop"], ["cost", 3, 1000.0, "hadoop"],
              ["hadoop", 4, 1500.0, "hadoop"], ["cost", 5, 1500.0, "hadoop"],
              ["hadoop-b", 6, 1200.0, "hadoop"]]
    # neighbours: 500/250 = 2.0, (500+1500)/2/1000 = 1.0, 1500/1500 = 1.0 -> median 1.0
    assert reads.paired(window, "cost") == 1.0
    assert reads.paired(window, "hadoop-b") == 1.25  # only a neighbour before it
    assert reads.paired(window, "hadoop") is None
    assert reads.paired([["cost", 0, 10.0, "inec"]], "cost") is None


def test_racks_deal_the_datanodes_and_keep_the_spines_hosts_apart():
    tb = Testbed(Config(datanodes=9, racks=3, oversubscription=4, link="100mbit",
                        run_dir="/nonexistent"))
    assert [tb.rack("dn%02d" % i) for i in range(1, 10)] == [1, 2, 3] * 3
    assert tb.rack("cl") == 1 and tb.rack("nn") is None and tb.rack("sw") is None
    assert tb.rack_hosts(1) == ["cl", "dn01", "dn04", "dn07", "sw1"]
    assert tb.rack_path("dn05") == "/rack2" and tb.rack_path("nn") == "/spine"
    # a software switch in every rack, unshaped (it stands for the rack's switch), named to
    # the DataNodes by netec.switch.racks
    assert tb.rack_switches == ["sw1", "sw2", "sw3"] and tb.rack("sw3") == 3
    assert tb.ip("sw2") == "198.18.100.202" and tb.ip("dn02") == "198.18.100.12"
    assert tb.switch_racks_key() == ",".join(
        "/rack%d=198.18.100.20%d:%d" % (r, r, hadoop.SWITCH_CONTROL_PORT) for r in (1, 2, 3))
    # an uplink carries its rack's host links together over the oversubscription
    assert tb.uplink_rate(1) == "100000000bit"  # 4 x 100 Mbit/s / 4
    assert tb.uplink_rate(2) == "75000000bit"   # 3 x 100 Mbit/s / 4
    assert tb.fabric.switch_ns("dn02") == "ntb-rack2" and tb.fabric.switch_ns("nn") == "ntb-tor"
    assert tb.fabric.uplink(3) == "ntbu3"
    flat = Testbed(Config(datanodes=4, run_dir="/nonexistent"))
    assert flat.rack("dn01") is None and flat.rack_path("dn01") == "/default-rack"
    assert flat.fabric.switch_ns("dn01") == "ntb-tor" and not flat.fabric.racks()
    assert flat.rack_switches == [] and flat.switch_racks_key() == ""
    assert Testbed(Config(datanodes=4, racks=2, run_dir="/x")).uplink_rate(1) is None


def test_rack_settings_that_cannot_be_built_are_refused_by_name():
    with pytest.raises(TestbedError, match="--racks 1"):
        Config(racks=1)
    with pytest.raises(TestbedError, match="--racks 5 with --datanodes 4"):
        Config(racks=5, datanodes=4)
    with pytest.raises(TestbedError, match="--racks needs --fabric bridge"):
        Config(racks=2, fabric="bmv2")
    with pytest.raises(TestbedError, match="--oversubscription needs --racks"):
        Config(oversubscription=4, link="1gbit")
    with pytest.raises(TestbedError, match="--oversubscription needs --link"):
        Config(racks=3, oversubscription=4).check_for_up()
    # a testbed saved unshaped (between a benchmark's runs) is attached all the same
    Config(racks=3, oversubscription=4, link=None)
    with pytest.raises(TestbedError, match="--oversubscription 0.5"):
        Config(racks=3, oversubscription=0.5, link="1gbit")


def test_the_topology_script_answers_hadoop_one_rack_per_address(tmp_path):
    import subprocess
    script = tmp_path / "topology.sh"
    script.write_text(net.topology_script({"198.18.100.11": "/rack1",
                                           "198.18.100.12": "/rack2"}))
    script.chmod(0o755)
    out = subprocess.run([str(script), "198.18.100.12", "198.18.100.99", "198.18.100.11"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    assert out.split() == ["/rack2", "/default-rack", "/rack1"]
    with pytest.raises(TestbedError, match="bad address"):
        net.topology_script({"198.18.100.1; rm -rf /": "/rack1"})
    with pytest.raises(TestbedError, match="bad address"):
        net.topology_script({"198.18.100.1": "/rack 1"})


def test_the_racks_report_shows_each_run_against_native(tmp_path):
    from netec_testbed import racks
    run = {"victims": ["dn03"], "blocks": 6, "tasks": 6, "bytes": 25165824,
           "redundancy_s": 21.5, "window_s": 5.1, "rate_MBps": 4.9, "uplinks": {},
           "cores_busy": 1.2, "equal": True, "racks": 3, "oversubscription": 4.0,
           "code": "rs63", "uplink": "100000000bit"}
    res = {"command": "bin/netec-bench racks", "seconds": 60, "link": "100mbit", "groups": 8,
           "block_mb": 4, "datanodes": 12, "warmup": 1, "runs": [
               dict(run, route="native", served_by={"native": 6}, cross_rack_per_byte=4.6),
               dict(run, route="inec-chain", served_by={"inec": 6}, rate_MBps=9.8,
                    cross_rack_per_byte=1.9)]}
    out = tmp_path / "racks.md"
    racks.write_report(res, str(out))
    text = out.read_text()
    assert "| 3 | 1:4 | 100 Mbit/s | rs63 | inec-chain | 6 | 6 | inec 6 | 21.5 |" in text
    assert "| 3 | 1:4 | rs63 | inec-chain | 1 | 2.00x | 1.90 (4.60) |" in text
    assert (tmp_path / "racks.json").exists()
    # --repeat: a route's runs each a row of the first table, their mean against native's
    res["runs"].append(dict(run, route="native", served_by={"native": 6}, rate_MBps=2.45,
                            cross_rack_per_byte=5.0))
    res["runs"].append(dict(run, route="inec-chain", served_by={"inec": 6}, rate_MBps=7.35,
                            cross_rack_per_byte=2.1))
    racks.write_report(res, str(out))
    text = out.read_text()
    assert text.count("| rs63 | inec-chain | 6 | 6 | inec 6 |") == 2, text
    assert "| 3 | 1:4 | rs63 | inec-chain | 2 | 2.33x | 2.00 (4.80) |" in text, text


def test_the_racks_task_log_keeps_routed_tasks_and_skips_re_replication():
    from netec_testbed import racks
    routed = [{"dn": "dn02", "route": "inec", "ms": 900, "bytes": 4, "start": 5000,
               "others": ""},
              {"dn": "dn01", "route": "native", "ms": 700, "bytes": 4, "start": 4200,
               "others": "inec failed: x"}]
    log = racks._task_log(routed)
    assert [(t["dn"], t["at_ms"]) for t in log] == [("dn01", 0), ("dn02", 800)]
    # re-replication's tasks come from the DataNodes' logs, with no start (this crashed
    # bin/netec-bench racks after every replication run)
    assert racks._task_log([{"dn": "dn03", "route": "replication", "bytes": 4}]) == []
    assert len(racks._task_log(routed + [{"dn": "dn03", "route": "replication",
                                          "bytes": 4}])) == 2


def test_files_wait_until_the_namenode_has_placed_every_group_on_its_racks(monkeypatch):
    """What the racks benchmark met (NameNode log, 2026-11-29): group 1009 of RS(3,2) written
    on 3 of 4 racks (DataNodes passed over as too busy), then its unit 0 copied from dn09 to
    dn03 and dn09's copy deleted. A DataNode killed before that was over lost a unit that was
    not lost; written files are only handed on once the NameNode is done."""
    from netec_testbed import scenario
    tb = Testbed(Config(datanodes=12, racks=4, run_dir="/nonexistent"))
    ip = {h: tb.ip(h) for h in tb.datanodes}
    misplaced = ["dn09", "dn05", "dn01", "dn10", "dn12"]       # racks 1, 1, 1, 2, 4
    moving = misplaced + ["dn03"]                                # unit 0 twice
    placed = ["dn03", "dn05", "dn01", "dn10", "dn12"]          # racks 3, 1, 1, 2, 4
    # the NameNode's answer and the holders, a step each time it is asked; the first answer
    # is the work it had before the write (a block left short of redundancy by another file)
    script = [({"LowRedundancyBlocks": 1}, None),
              ({"LowRedundancyBlocks": 2}, misplaced), ({"LowRedundancyBlocks": 1}, misplaced),
              ({"PendingReconstructionBlocks": 1, "LowRedundancyBlocks": 1}, misplaced),
              ({"LowRedundancyBlocks": 1}, moving), ({"LowRedundancyBlocks": 1}, placed)]
    step, seen = [-1], []

    def namesystem():
        step[0] += 1
        return script[min(step[0], len(script) - 1)][0]

    def locate(replicated=False):
        holders = script[min(step[0], len(script) - 1)][1]
        seen.append(holders)
        return {"groups": [{"offset": 0, "bytes": 3 * (4 << 20), "units": [
            {"index": 0 if replicated else i % 5, "block": i, "dn": ip[h] + ":9866"}
            for i, h in enumerate(holders)]}]}

    def patch(t, replicated=False):
        monkeypatch.setattr(t, "make_dir", lambda *a: None)
        monkeypatch.setattr(t, "probe", lambda op, *a, **kw:
                            locate(replicated) if op == "locate" else {})
        monkeypatch.setattr(t, "namesystem", namesystem)
        monkeypatch.setattr(t, "live_datanodes", lambda: list(t.datanodes))

    patch(tb)
    monkeypatch.setattr(scenario.time, "sleep", lambda s: None)
    files = scenario.Files(tb, "/racks/x", "NETEC-3-2-1024k", 1, 3 * (4 << 20)).write()
    assert seen == [misplaced, moving, placed]
    assert [u[4] for u in files.locate()] == placed
    # a group short of a unit (its parity not yet reported) is not placed yet; the timeout
    # says what was missing
    script[:] = [({}, ["dn03", "dn05", "dn01", "dn10"])]
    step[0] = -1
    with pytest.raises(TestbedError, match=r"units \[0, 1, 2, 3\], not \[0, 1, 2, 3, 4\]"):
        files.settle(timeout=0.3)
    # a rack whose DataNodes are all dead is not asked for: three racks left, three used
    monkeypatch.setattr(tb, "live_datanodes", lambda: [d for d in tb.datanodes
                                                       if tb.rack(d) != 3])
    script[:] = [({}, ["dn09", "dn05", "dn01", "dn10", "dn12"])]
    step[0] = -1
    files.settle(timeout=5)
    # replicas: two racks are the default policy's, and a replicated block's copies all have
    # index 0 (not a unit held twice)
    one_rack = ["dn01", "dn05", "dn09"]
    script[:] = [({}, None), ({}, one_rack), ({"PendingDeletionBlocks": 1}, one_rack + ["dn10"]),
                 ({}, ["dn01", "dn05", "dn10"])]
    step[0] = -1
    seen.clear()
    patch(tb, replicated=True)
    scenario.Files(tb, "/racks/r", None, 1, 10).write()
    assert seen == [one_rack, ["dn01", "dn05", "dn10"]]
    # on one flat fabric the NameNode moves nothing to place a block: placed once it is quiet
    flat = Testbed(Config(datanodes=12, run_dir="/nonexistent"))
    script[:] = [({}, misplaced)]
    step[0] = -1
    seen.clear()
    patch(flat)
    scenario.Files(flat, "/flat/x", "NETEC-3-2-1024k", 1, 10).write()
    assert seen == []
