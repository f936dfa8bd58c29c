"""A NetEC-HDFS cluster of real processes: one NameNode, N DataNodes, the software switch and
a client host, each in its own network namespace, each daemon its own JVM and conf dir."""

import glob
import json
import os
import shutil
import subprocess
import time
import urllib.request

from . import hadoop, net, p4fabric
from .net import TestbedError

POLICIES = ("NETEC-3-2-1024k", "NETEC-6-3-1024k", "NETEC-10-4-1024k")


class Config:
    """What `up` builds. Every field has a command-line flag of the same name (bin/netec-testbed)."""

    def __init__(self, **kw):
        self.prefix = "ntb"
        self.fabric = "bridge"      # or "bmv2": simple_switch running the P4 program (p4fabric)
        self.datanodes = 12
        self.link = None            # e.g. "1gbit"; None: unshaped
        self.delay_us = 0
        self.loss = 0.0
        self.shape_switch = False   # the switch host stands for an ASIC: unshaped by default
        self.hadoop = "3.4.3"
        self.block_size = 8 << 20   # bytes of one internal block (dfs.blocksize)
        self.route_order = "switch,inec,native"
        self.inec_scheme = "ecpipe"
        self.route_timeout_ms = 30000
        self.run_dir = None
        self.racks = 0              # racks of DataNodes (0: one flat fabric); bridge fabric only
        self.oversubscription = 1.0  # a rack's host links' sum / its uplink's rate
        # each rack's switch: "java" (the software switch) or "bmv2" (BMv2 one-armed on the
        # rack's bridge, running the datagram XOR program, its P4 control plane on sw1, ...)
        self.rack_switch = "java"
        self.hdfs = {}              # extra hdfs-site keys for every host
        self.jvm_options = []       # extra JVM options of the daemons (NameNode, DataNodes, switch)
        for k, v in kw.items():
            if not hasattr(self, k):
                raise TypeError("unknown testbed setting " + k)
            setattr(self, k, v)
        if self.run_dir is None:
            self.run_dir = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                        "netec-testbed-" + self.prefix)
        if self.datanodes < 3 or self.datanodes > 200:
            raise TestbedError("--datanodes %d: expected 3..200" % self.datanodes)
        if self.fabric not in net.KINDS:
            raise TestbedError("--fabric %s: expected one of %s" % (self.fabric,
                                                                   ", ".join(net.KINDS)))
        if self.racks and not 2 <= self.racks <= 16:
            raise TestbedError("--racks %d: expected 2..16 (or none: one flat fabric)"
                               % self.racks)
        if self.racks and self.fabric != "bridge":
            raise TestbedError("--racks needs --fabric bridge (the BMv2 fabric is one switch)")
        if self.racks > self.datanodes:
            raise TestbedError("--racks %d with --datanodes %d: a rack without DataNodes"
                               % (self.racks, self.datanodes))
        if not self.oversubscription >= 1:
            raise TestbedError("--oversubscription %s: expected 1 or more (1: an uplink as fast "
                               "as its rack's host links together)" % self.oversubscription)
        if self.oversubscription != 1 and not self.racks:
            raise TestbedError("--oversubscription needs --racks")
        if self.rack_switch not in ("java", "bmv2"):
            raise TestbedError("--rack-switch %s: expected java or bmv2" % self.rack_switch)
        if self.rack_switch == "bmv2" and not self.racks:
            raise TestbedError("--rack-switch bmv2 needs --racks")

    def check_for_up(self):
        """What only `up` needs (a saved testbed is attached whatever its shaping now)."""
        if self.oversubscription != 1 and not self.link:
            raise TestbedError("--oversubscription needs --link: an uplink's rate is its "
                               "rack's host links' rate / the oversubscription")


def _generic_options(conf):
    """Hadoop's generic options for (key, value) pairs: -D key=value ..."""
    return [a for k, v in conf for a in ("-D", "%s=%s" % (k, v))]


def _ip(host):
    fixed = {"nn": 2, "sw": 3, "cl": 4}
    if host in fixed:
        return "%s.%d" % (net.SUBNET, fixed[host])
    if host.startswith("sw"):  # rack R's switch: .200 + R (DataNodes take .11 up)
        return "%s.%d" % (net.SUBNET, 200 + int(host[2:]))
    return "%s.%d" % (net.SUBNET, 10 + int(host[2:]))


def _http_port(host):
    return (hadoop.NN_HTTP_PORT if host == "nn" else hadoop.SWITCH_METRICS_PORT
            if is_switch(host) else hadoop.DN_HTTP_PORT)


def is_switch(host):
    """The spine's switch (sw) or a rack's (sw1, sw2, ...)."""
    return host == "sw" or (host.startswith("sw") and host[2:].isdigit())


class Cluster:
    """What the testbed and the container cluster (containers.py) share: tools on the client
    host, metrics over HTTP, waiting, block files on disk. A subclass gives ip(host),
    datanodes, dead, alive(host), client(main, *args) and data_dir(host)."""

    def probe(self, *args, conf=()):
        """NetecProbe on the client host; returns its JSON answer."""
        return json.loads(self.client(hadoop.PROBE, *(_generic_options(conf) + list(args))))

    def ec_admin(self, *args):
        return self.client(hadoop.ECADMIN, *args)

    def fs(self, *args):
        return self.client(hadoop.FSSHELL, *args)

    def make_dir(self, path, policy=None):
        self.fs("-mkdir", "-p", path)
        if policy:
            self.ec_admin("-setPolicy", "-path", path, "-policy", policy)

    # ---- metrics over HTTP ------------------------------------------------------------------

    def jmx(self, host, query):
        port = _http_port(host)
        url = "http://%s:%d/jmx?qry=%s" % (self.ip(host), port, query)
        with urllib.request.urlopen(url, timeout=10) as r:
            beans = json.load(r).get("beans", [])
        return beans[0] if beans else {}

    def prom(self, host):
        port = _http_port(host)
        with urllib.request.urlopen("http://%s:%d/prom" % (self.ip(host), port),
                                    timeout=10) as r:
            return r.read().decode()

    def namesystem(self):
        # FSNamesystemState is a plain MBean, read live; FSNamesystem is a metrics2 source
        # whose JMX view is cached for the metrics period (10 s).
        return self.jmx("nn", "Hadoop:service=NameNode,name=FSNamesystemState")

    def router(self, dn):
        return self.jmx(dn, "Hadoop:service=DataNode,name=NetecRouter-%d" % hadoop.DN_XFER_PORT)

    def live_datanodes(self):
        return [d for d in self.datanodes if d not in self.dead and self.alive(d)]

    def in_flight(self):
        """Reconstruction tasks the live DataNodes' routers are working on now."""
        total = 0
        for dn in self.live_datanodes():
            try:
                total += self.router(dn).get("InFlight", 0)
            except OSError:
                pass
        return total

    # ---- waiting ---------------------------------------------------------------------------

    def wait(self, what, test, timeout):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                if test():
                    return
            except (OSError, ValueError, KeyError) as e:
                last = e
            time.sleep(0.25)
        raise TestbedError("timed out after %d s waiting for %s%s" % (
            timeout, what, " (last error: %s)" % last if last else ""))

    def wait_live(self, n, timeout=180):
        self.wait("%d live DataNodes at the NameNode" % n,
                  lambda: self.namesystem().get("NumLiveDataNodes") == n, timeout)

    def wait_out_of_safemode(self, timeout=120):
        self.wait("the NameNode to leave safe mode", lambda: self.jmx(
            "nn", "Hadoop:service=NameNode,name=NameNodeInfo").get("Safemode") == "", timeout)

    def wait_plugins(self, timeout=120):
        def ready():
            return all(self.router(dn).get("Tasks") is not None for dn in self.live_datanodes())
        self.wait("the NetEC plugin on every DataNode", ready, timeout)

    def wait_dead(self, hosts, want, timeout=120):
        """Until the NameNode counts WANT dead DataNodes (HOSTS among them)."""
        self.wait("the NameNode to declare %s dead" % ", ".join(hosts),
                  lambda: self.namesystem().get("NumDeadDataNodes", 0) >= want, timeout)

    # ---- blocks on disk --------------------------------------------------------------------

    def replicas(self, host, state="finalized"):
        """{block id: path} of HOST's block files in STATE (finalized or rbw)."""
        out = {}
        pattern = os.path.join(self.data_dir(host), "current", "BP-*", "current", state, "**",
                               "blk_*")
        for p in glob.glob(pattern, recursive=True):
            name = os.path.basename(p)
            if not name.endswith(".meta"):
                out[int(name[4:])] = p
        return out


class Testbed(Cluster):
    __test__ = False  # not a pytest test class

    def __init__(self, config):
        self.cfg = config
        self.fabric = self._fabric()
        self.p4_json = None  # the BMv2 fabric's compiled program
        self.run_dir = config.run_dir
        self.state_file = os.path.join(self.run_dir, "state.json")
        self.classpath = None
        self.procs = {}     # host -> {"pid":, "log":, "cmd":}
        self.dead = set()   # DataNodes killed (their data dirs stay for comparison)

    # ---- hosts -------------------------------------------------------------------------

    @property
    def datanodes(self):
        return ["dn%02d" % i for i in range(1, self.cfg.datanodes + 1)]

    @property
    def rack_switches(self):
        """Each rack's software switch (sw1 in rack 1, ...), with racks on the bridge fabric."""
        if not self.cfg.racks or self.cfg.fabric != "bridge":
            return []
        return ["sw%d" % r for r in range(1, self.cfg.racks + 1)]

    def hosts(self):
        return ["nn", "sw", "cl"] + self.datanodes + self.rack_switches

    def switch_racks_key(self):
        """netec.switch.racks for the rack switches: '/rack1=198.18.100.201:port,...'."""
        return ",".join("/rack%s=%s:%d" % (h[2:], _ip(h), hadoop.SWITCH_CONTROL_PORT)
                        for h in self.rack_switches)

    @staticmethod
    def ip(host):
        return _ip(host)

    # ---- racks -----------------------------------------------------------------------------

    def _fabric(self):
        racks = {h: self.rack(h) for h in self.hosts() if self.rack(h)}
        return net.Fabric(self.cfg.prefix, self.cfg.fabric, racks,
                          fixed_macs=self.cfg.rack_switch == "bmv2")

    def rack(self, host):
        """HOST's rack, 1..racks: DataNodes dealt round the racks in turn, the client in rack
        1; None for the spine's hosts (NameNode, switch) and without racks."""
        if not self.cfg.racks:
            return None
        if host.startswith("dn"):
            return (int(host[2:]) - 1) % self.cfg.racks + 1
        if is_switch(host) and host != "sw":
            return int(host[2:])
        return 1 if host == "cl" else None

    def rack_path(self, host):
        """HOST's location as the NameNode sees it (the topology script's answer)."""
        rack = self.rack(host)
        return "/default-rack" if not self.cfg.racks else (
            "/rack%d" % rack if rack else "/spine")

    def rack_hosts(self, rack):
        return [h for h in self.hosts() if self.rack(h) == rack]

    def uplink_rate(self, rack):
        """RACK's uplink rate (tc's bits), both ways: its shaped hosts' links together over the
        oversubscription; None (unshaped) without --link."""
        if not self.cfg.link:
            return None
        shaped = [h for h in self.rack_hosts(rack) if not is_switch(h) or self.cfg.shape_switch]
        return "%dbit" % (net.rate_bits(self.cfg.link) * len(shaped)
                          / self.cfg.oversubscription)

    def uplink_counters(self):
        """{rack: (bytes into it, bytes out of it)} over its uplink since it was made."""
        return self.fabric.uplink_counters()

    def topology_script(self):
        return os.path.join(self.run_dir, "topology.sh")

    def addresses(self):
        """[(host, address)] of every port on the fabric: the management port, then the
        hosts (the BMv2 fabric numbers its ports in this order)."""
        return [("mgmt", net.MGMT_IP)] + [(h, _ip(h)) for h in self.hosts()]

    def host_of(self, address):
        """'198.18.100.11:9866' -> 'dn01'."""
        ip = address.split(":")[0]
        for h in self.hosts():
            if _ip(h) == ip:
                return h
        raise TestbedError("no testbed host has address " + address)

    def data_dir(self, host):
        return os.path.join(self.run_dir, host, "data")

    def log(self, host):
        return os.path.join(self.run_dir, "logs", host + ".log")

    # ---- up / down -------------------------------------------------------------------------

    def leftovers(self):
        """What a previous testbed of this prefix left: namespaces, the management port,
        processes of its state file, its run dir."""
        found = ["namespace " + n for n in net.namespaces(self.cfg.prefix)]
        found += ["interface %s with %s" % (i, net.MGMT_IP) for i in net.holders_of(net.MGMT_IP)]
        if os.path.exists(self.state_file):
            found.append("run dir " + self.run_dir)
        return found

    def up(self, progress=print):
        self.cfg.check_for_up()
        net.require_root()
        reason = "bmv2" in (self.cfg.fabric, self.cfg.rack_switch) and p4fabric.missing()
        if reason:
            raise TestbedError("%s: %s" % ("--fabric bmv2" if self.cfg.fabric == "bmv2"
                                           else "--rack-switch bmv2", reason))
        left = self.leftovers()
        if left:
            raise TestbedError("a testbed is already here (%s): run `bin/netec-testbed down%s` "
                               "first" % (", ".join(left), "" if self.cfg.prefix == "ntb"
                                          else " --prefix " + self.cfg.prefix))
        try:
            self._up(progress)
        except BaseException:
            progress("testbed: start failed, removing what was made")
            self.down(keep_run_dir=True)
            raise

    def _up(self, progress):
        os.makedirs(os.path.join(self.run_dir, "logs"), exist_ok=True)
        self._save()
        bmv2 = self.cfg.fabric == "bmv2"
        if bmv2 or self.cfg.rack_switch == "bmv2":
            progress("testbed: compiling switch-p4's %s for BMv2 (p4c-bm2-ss)" % p4fabric.PROGRAM)
            self.p4_json = p4fabric.compile_program(os.path.join(self.run_dir, "p4"),
                                                    self.log("p4"))
        progress("testbed: building the plugin and Hadoop %s's classpath" % self.cfg.hadoop)
        self.classpath = hadoop.build(self.cfg.hadoop, os.path.join(self.run_dir, "logs",
                                                                     "build.log"))
        progress("testbed: %d hosts in namespaces %s-*, %s in %s, subnet %s.0/24"
                 % (len(self.hosts()), self.cfg.prefix,
                    "BMv2 (simple_switch, %s.p4)" % p4fabric.PROGRAM if bmv2 else "bridge",
                    self.fabric.tor, net.SUBNET))
        self.fabric.create_tor()
        if self.cfg.racks:
            progress("testbed: %d racks (namespaces %s), uplinks %s both ways (1:%g)" % (
                self.cfg.racks, ", ".join(self.fabric.rack_ns(r) for r in self.fabric.racks()),
                self.uplink_rate(1) or "unshaped", self.cfg.oversubscription))
            self.fabric.create_racks()
            with open(self.topology_script(), "w") as f:
                f.write(net.topology_script({_ip(h): self.rack_path(h) for h in self.hosts()}))
            os.chmod(self.topology_script(), 0o755)
            # Hadoop falls back to /default-rack, silently, on a script it cannot run (a run
            # dir on a noexec mount): the testbed refuses instead
            try:
                got = net.run(self.topology_script(), _ip("dn01")).split()
            except (OSError, TestbedError) as e:
                raise TestbedError("the topology script %s does not run (%s): put --run-dir "
                                   "on a mount that allows executing" % (self.topology_script(), e))
            if got != [self.rack_path("dn01")]:
                raise TestbedError("the topology script %s answered %s for dn01, not %s" % (
                    self.topology_script(), got, self.rack_path("dn01")))
        for h in self.hosts():
            self.fabric.add_host(h, _ip(h))
        if bmv2:
            p = p4fabric.start_switch(self.fabric, self.addresses(), self.p4_json,
                                      self.log("p4"))
            self.procs["p4"] = {"pid": p.pid, "log": self.log("p4")}
        if self.cfg.rack_switch == "bmv2":
            progress("testbed: a P4 switch in each rack (BMv2 one-armed, VIPs %s)"
                     % ", ".join(p4fabric.rack_vip(r) for r in self.fabric.racks()))
            for r in self.fabric.racks():
                p = p4fabric.start_rack_switch(self.fabric, r, "sw%d" % r, self.p4_json,
                                               self.log("p4r%d" % r))
                self.procs["p4r%d" % r] = {"pid": p.pid, "log": self.log("p4r%d" % r)}
                self.fabric.static_neighbour(self.hosts(), p4fabric.rack_vip(r))
        self.shape(self.cfg.link)
        self._save()
        for h in self.hosts():
            self.write_conf(h)
        progress("testbed: NameNode on %s" % _ip("nn"))
        self._java("nn", hadoop.NAMENODE, ["-format", "-nonInteractive", "-force"], wait=True)
        self.start("nn")
        self.start("sw")
        for sw in self.rack_switches:
            self.start(sw)
        for dn in self.datanodes:
            self.start(dn)
        progress("testbed: waiting for %d DataNodes to register" % len(self.datanodes))
        self.wait_live(len(self.datanodes))
        self.wait_out_of_safemode()
        self.ec_admin("-addPolicies", "-policyFile", os.path.join(hadoop.REPO, "conf",
                                                                  "netec-policies.xml"))
        for p in POLICIES:
            self.ec_admin("-enablePolicy", "-policy", p)
        progress("testbed: up; NETEC policies added and enabled")

    def down(self, keep_run_dir=False):
        pids = [p["pid"] for p in self.procs.values()]
        state = self._load_state()
        if state:
            pids += [p["pid"] for p in state.get("procs", {}).values()]
        net.destroy(self.cfg.prefix, pids)
        self.procs = {}
        if not keep_run_dir and os.path.isdir(self.run_dir):
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def shape(self, rate):
        """(Re)shapes every host's link; the switch's only with shape_switch."""
        for h in self.hosts():
            if is_switch(h) and not self.cfg.shape_switch:
                self.fabric.shape(h, None)
            else:
                self.fabric.shape(h, rate, self.cfg.delay_us, self.cfg.loss)
        self.cfg.link = rate
        for r in self.fabric.racks():
            self.fabric.shape_uplink(r, self.uplink_rate(r))
        self._save()

    # ---- configuration and processes -------------------------------------------------------

    def write_conf(self, host):
        d = os.path.join(self.run_dir, host)
        core = {
            "fs.defaultFS": "hdfs://%s:%d" % (_ip("nn"), hadoop.NN_RPC_PORT),
            "hadoop.tmp.dir": os.path.join(d, "tmp"),
            "hadoop.prometheus.endpoint.enabled": "true",
        }
        if self.cfg.racks:
            # the NameNode places a group's internal blocks and picks targets by rack
            # (BlockPlacementPolicyRackFaultTolerant, the EC default) as on a real cluster
            core["net.topology.script.file.name"] = self.topology_script()
        hdfs = {
            "dfs.namenode.name.dir": os.path.join(d, "name"),
            "dfs.datanode.data.dir": os.path.join(d, "data"),
            "dfs.blocksize": str(self.cfg.block_size),
            "dfs.namenode.fs-limits.min-block-size": "0",
            "dfs.permissions.enabled": "false",
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.namenode.safemode.extension": "0",
            # A killed DataNode is declared dead after 2 x recheck + 10 x heartbeat = 14 s,
            # and reconstruction is scheduled every second, several tasks per DataNode, so
            # that rates measure the network and the routes, not the NameNode's pacing.
            "dfs.heartbeat.interval": "1",
            "dfs.namenode.heartbeat.recheck-interval": "2000",
            "dfs.namenode.redundancy.interval.seconds": "1",
            "dfs.namenode.replication.max-streams": "8",
            "dfs.namenode.replication.max-streams-hard-limit": "16",
            "dfs.namenode.replication.work.multiplier.per.iteration": "8",
            "dfs.namenode.reconstruction.pending.timeout-sec": "30",
            "dfs.client.socket-timeout": "20000",
            "netec.route.order": self.cfg.route_order,
            "netec.inec.scheme": self.cfg.inec_scheme,
            "netec.switch.address": "%s:%d" % (_ip("sw"), hadoop.SWITCH_CONTROL_PORT),
            "netec.switch.timeout.ms": str(self.cfg.route_timeout_ms),
            # with racks, each rack's switch sums its survivors (the bench sets it "" for
            # the flat switch on the spine)
            "netec.switch.racks": self.switch_racks_key(),
            "netec.inec.timeout.ms": str(self.cfg.route_timeout_ms),
        }
        if self.cfg.fabric == "bmv2" or self.cfg.rack_switch == "bmv2":
            hdfs.update(p4fabric.DATANODE_KEYS)
        hdfs.update(self.cfg.hdfs)
        if host == "cl":
            core["fs.hdfs.impl"] = "io.netec.hdfs.client.NetecDistributedFileSystem"
        hadoop.write_conf(os.path.join(d, "conf"), core, hdfs)

    def _java(self, host, main, args=(), wait=False, heap="512m"):
        d = os.path.join(self.run_dir, host)
        os.makedirs(os.path.join(d, "tmp"), exist_ok=True)
        cmd = ["ip", "netns", "exec", self.fabric.ns(host)] + hadoop.java_command(
            os.path.join(d, "conf"), self.classpath, main, args, heap=heap,
            tmp=os.path.join(d, "tmp"), options=() if host == "cl" else self.cfg.jvm_options)
        if wait:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=600)
            with open(self.log(host), "a") as f:
                f.write(p.stderr)
            if p.returncode != 0:
                # The first exception line says why; the stack trace stays in the log.
                why = [l for l in p.stderr.splitlines() if "Exception" in l or "Error" in l
                       or l.startswith(main.rsplit(".", 1)[1].lower())]
                raise TestbedError("%s on %s failed (exit %d): %s (log %s)" % (
                    main.rsplit(".", 1)[1], host, p.returncode,
                    (why[0] if why else p.stderr.strip()[-500:]).strip(), self.log(host)))
            return p.stdout
        out = open(self.log(host), "a")
        # A session of its own: the daemon outlives `up` and a Ctrl-C of the shell.
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)

    def start(self, host):
        if host == "nn":
            p = self._java("nn", hadoop.NAMENODE)
        elif host == "sw" and self.cfg.fabric == "bmv2":
            p = self._p4_control_plane()
        elif is_switch(host) and host != "sw" and self.cfg.rack_switch == "bmv2":
            p = self._p4_control_plane(int(host[2:]))
        elif is_switch(host):
            p = self._java(host, hadoop.SWITCH, [
                "--bind", _ip(host), "--control-port", str(hadoop.SWITCH_CONTROL_PORT),
                "--data-port", str(hadoop.SWITCH_DATA_PORT),
                "--metrics-port", str(hadoop.SWITCH_METRICS_PORT), "--io-threads", "2",
                "--memory-mb", "1024"])
        else:
            p = self._java(host, hadoop.DATANODE)
            self.dead.discard(host)
        self.procs[host] = {"pid": p.pid, "log": self.log(host)}
        self._save()
        return p.pid

    def _p4_control_plane(self, rack=None):
        """The switch host of the BMv2 fabric (or RACK's P4 switch): the P4 control plane on
        the control port."""
        host = "sw" if rack is None else "sw%d" % rack
        if rack is None:
            cmd = p4fabric.control_plane_command(self.fabric, self.addresses(), self.p4_json,
                                                 _ip("sw"), hadoop.SWITCH_CONTROL_PORT)
        else:
            cmd = p4fabric.rack_control_plane_command(
                rack, [(h, _ip(h)) for h in self.hosts()],
                [p4fabric.rack_vip(r) for r in self.fabric.racks()], self.p4_json, _ip(host),
                hadoop.SWITCH_CONTROL_PORT)
        cmd = ["ip", "netns", "exec", self.fabric.ns(host)] + cmd
        out = open(self.log(host), "a")
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env=p4fabric.control_plane_env())
        out.close()
        p4fabric.wait_answering(self.fabric.ns(host), _ip(host), hadoop.SWITCH_CONTROL_PORT,
                                p, self.log(host), "the P4 control plane")
        return p

    def p4_counters(self, rack=None):
        """The BMv2 fabric's (or RACK's P4 switch's) verdict counters (index V_* of
        netec_logic.p4 -> DATA packets)."""
        return p4fabric.counters(self.fabric, rack)

    def pid(self, host):
        return self.procs[host]["pid"]

    def alive(self, host):
        return host in self.procs and net._alive(self.procs[host]["pid"])

    def kill(self, host, sig=9):
        """kill -SIG of HOST's daemon; a killed DataNode's data dir is kept."""
        os.kill(self.pid(host), sig)
        deadline = time.time() + 20
        while net._alive(self.pid(host)) and time.time() < deadline:
            time.sleep(0.05)
        if host.startswith("dn"):
            self.dead.add(host)

    def stop(self, host):
        net.kill_pids([self.pid(host)])

    def restart_datanodes(self, route_order=None, inec_scheme=None, revive=False):
        """Restarts every DataNode with a new route order / INEC scheme. With REVIVE, dead
        DataNodes come back as new, empty ones (their old data dir removed)."""
        self.cfg.route_order = route_order or self.cfg.route_order
        self.cfg.inec_scheme = inec_scheme or self.cfg.inec_scheme
        for dn in self.datanodes:
            if dn in self.dead and not revive:
                continue
            if self.alive(dn):
                self.stop(dn)
            if dn in self.dead:
                old = self.data_dir(dn)
                if os.path.isdir(old):
                    shutil.rmtree(old)
            self.write_conf(dn)
        self.write_conf("cl")
        for dn in self.datanodes:
            if revive or dn not in self.dead:
                self.start(dn)
        self.wait_live(len([d for d in self.datanodes if d not in self.dead]))
        self.wait_plugins()

    def revive(self, dn):
        """A killed DataNode back as a new, empty one (its old data dir removed)."""
        if self.alive(dn):
            return
        shutil.rmtree(self.data_dir(dn), ignore_errors=True)
        self.start(dn)
        self.wait_live(len([d for d in self.datanodes if d not in self.dead]))

    def _save(self):
        os.makedirs(self.run_dir, exist_ok=True)
        state = {"config": vars(self.cfg), "procs": self.procs, "dead": sorted(self.dead),
                 "classpath": self.classpath, "p4_json": self.p4_json}
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f, indent=1)
        os.replace(tmp, self.state_file)

    def _load_state(self):
        try:
            with open(self.state_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    @classmethod
    def attach(cls, prefix="ntb", run_dir=None):
        """The testbed an earlier `up` left running (for status, down and the CLI's tools)."""
        tb = cls(Config(prefix=prefix, run_dir=run_dir))
        state = tb._load_state()
        if state and "config" in state:
            tb.cfg = Config(**state["config"])
            tb.fabric = tb._fabric()
            tb.p4_json = state.get("p4_json")
            tb.procs = state["procs"]
            tb.dead = set(state["dead"])
            tb.classpath = state["classpath"]
        return tb, state is not None

    def status(self):
        lines = ["run dir %s (prefix %s, Hadoop %s, %d DataNodes)" % (
            self.run_dir, self.cfg.prefix, self.cfg.hadoop, self.cfg.datanodes),
            "routes: netec.route.order=%s, netec.inec.scheme=%s" % (
                self.cfg.route_order, self.cfg.inec_scheme),
            "fabric: %s" % ("BMv2 simple_switch running switch-p4's %s.p4 (v1model), VIP %s; "
                            "the switch host runs its P4 control plane" % (
                                p4fabric.PROGRAM, p4fabric.VIP)
                            if self.cfg.fabric == "bmv2" else "a Linux bridge"),
            "links: %s both ways on every host%s" % (
                self.cfg.link or "unshaped",
                "" if self.cfg.shape_switch else "; the switch host stands for the switching "
                "ASIC and is unshaped"),
            self._racks_line(),
            "NameNode web UI http://%s:%d (from this host, via %s %s)" % (
                _ip("nn"), hadoop.NN_HTTP_PORT, self.fabric.mgmt, net.MGMT_IP)]
        lines = [l for l in lines if l]
        for h in self.hosts():
            if h == "cl":
                lines.append("%-5s %-15s client host (no daemon)" % (h, _ip(h)))
                continue
            p = self.procs.get(h)
            state = "not started" if not p else (
                "running pid %d" % p["pid"] if net._alive(p["pid"]) else "DEAD (pid %d)" % p["pid"])
            lines.append("%-5s %-15s %-22s log %s" % (h, _ip(h), state, self.log(h)))
        p = self.procs.get("p4")
        if p:
            lines.append("%-5s %-15s %-22s log %s" % (
                "p4", "(%s)" % self.fabric.tor, "simple_switch pid %d%s" % (
                    p["pid"], "" if net._alive(p["pid"]) else " DEAD"), p["log"]))
        return "\n".join(lines)

    def _racks_line(self):
        if not self.cfg.racks:
            return ""
        return "racks: %d on a spine (%s: %s), oversubscription 1:%g, uplinks both ways:\n%s" % (
            self.cfg.racks, self.fabric.tor, " ".join(h for h in self.hosts()
                                                    if not self.rack(h)),
            self.cfg.oversubscription, "\n".join(
                "  /rack%d  uplink %-12s %s" % (r, self.uplink_rate(r) or "unshaped",
                                                " ".join(self.rack_hosts(r)))
                for r in self.fabric.racks()))

    # ---- the client host -------------------------------------------------------------------

    def client(self, main, *args, check=True):
        try:
            return self._java("cl", main, args, wait=True, heap="1g")
        except TestbedError:
            if check:
                raise
            return None

    def exec_command(self, host, argv, **run):
        """ARGV run in HOST's namespace as an operator would run it on that host: its Hadoop
        configuration in HADOOP_CONF_DIR, and `hdfs` (dfs, ec, fsck, debug, dfsadmin,
        getconf, version) on PATH over the testbed's classpath. Returns the CompletedProcess
        (RUN: subprocess.run's keywords)."""
        if host not in self.hosts():
            raise TestbedError("no host %s in testbed %s (hosts: nn, sw, cl, dn01..dn%02d)"
                               % (host, self.cfg.prefix, self.cfg.datanodes))
        if not argv:
            raise TestbedError("exec %s: no command given" % host)
        if not self.classpath:
            raise TestbedError("testbed %s is not up: `bin/netec-testbed up%s` first" % (
                self.cfg.prefix, "" if self.cfg.prefix == "ntb"
                else " --prefix " + self.cfg.prefix))
        # the run dir is ours (up made it, as root): a dir another user made at that path
        # would put their `hdfs` first on a root PATH
        st = os.stat(self.run_dir)
        if st.st_uid != os.geteuid() or st.st_mode & 0o002:
            raise TestbedError("%s is not this user's alone (owner %d, mode %o): not running "
                               "commands from it" % (self.run_dir, st.st_uid, st.st_mode & 0o777))
        bindir = os.path.join(self.run_dir, "bin")
        os.makedirs(bindir, mode=0o755, exist_ok=True)
        for name, text, mode in (("hdfs", hadoop.hdfs_script(), 0o755),
                                 ("log4j.properties", hadoop.CLI_LOG4J, 0o644)):
            path = os.path.join(bindir, name)
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.chmod(path + ".tmp", mode)
            os.replace(path + ".tmp", path)
        tmp = os.path.join(self.run_dir, host, "tmp")
        os.makedirs(tmp, exist_ok=True)
        env = dict(os.environ, HADOOP_CONF_DIR=os.path.join(self.run_dir, host, "conf"),
                   NETEC_TESTBED_CLASSPATH=self.classpath, NETEC_TESTBED_BIN=bindir,
                   NETEC_TESTBED_TMP=tmp, NETEC_TESTBED_HOST=host,
                   PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        try:
            return subprocess.run(["ip", "netns", "exec", self.fabric.ns(host)] + list(argv),
                                  env=env, **run)
        except FileNotFoundError as e:
            raise TestbedError("exec %s: %s" % (host, e))

    def probe_async(self, *args, conf=()):
        """NetecProbe started on the client host; .communicate() gives its JSON line."""
        d = os.path.join(self.run_dir, "cl")
        cmd = ["ip", "netns", "exec", self.fabric.ns("cl")] + hadoop.java_command(
            os.path.join(d, "conf"), self.classpath, hadoop.PROBE,
            _generic_options(conf) + list(args),
            heap="1g", tmp=os.path.join(d, "tmp"))
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(self.log("cl"), "a"),
                                text=True)

    def cpu_seconds(self):
        """{host: user+system CPU seconds} of every running daemon, from /proc."""
        tick = os.sysconf("SC_CLK_TCK")
        out = {}
        for h, p in self.procs.items():
            try:
                with open("/proc/%d/stat" % p["pid"]) as f:
                    fields = f.read().split(") ", 1)[1].split()
                out[h] = (int(fields[11]) + int(fields[12])) / tick
            except (OSError, IndexError):
                pass
        return out

    def log_tail(self, host, lines=40):
        try:
            with open(self.log(host)) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""
