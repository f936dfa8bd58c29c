"""A NetEC-HDFS cluster of containers (docker/compose.yaml) behind the testbed's interface, so
that the same scenario (scenario.demo_routes, lose_and_rebuild) runs on it.

Hosts are named as in the testbed: nn, sw, cl and dn01.. (the DataNode containers in the order
compose numbered them). Each container's /data is an anonymous volume: a killed DataNode's
block files stay readable on this host for the byte-for-byte comparison, and `down` removes
them with the containers and the network.
"""

import glob
import ipaddress
import json
import os
import subprocess
import sys
import time

from . import hadoop
from .cluster import Cluster
from .net import TestbedError


class StaleNetwork(TestbedError):
    """A network the engine will not remove though no container is attached to it."""


REPO = hadoop.REPO
COMPOSE = os.path.join(REPO, "docker", "compose.yaml")
SERVICES = {"namenode": "nn", "switch": "sw", "client": "cl"}


class Settings:
    def __init__(self, **kw):
        self.project = "netec"
        self.image = "netec-hdfs:3.4.3"
        self.datanodes = 10          # RS(6,3) plus one spare
        self.block_size = 4 << 20    # bytes of one internal block (dfs.blocksize)
        self.route_order = "switch,inec,native"
        self.subnet = None           # None: the first free /24 of SUBNETS
        for k, v in kw.items():
            if not hasattr(self, k):
                raise TypeError("unknown setting " + k)
            setattr(self, k, v)


# The /24s a cluster may take, from the benchmarking range 198.18.0.0/15; the first one no
# Docker network holds is used, so a network left by a crashed run (or another cluster) does
# not stop this one with "Pool overlaps with other one on this address space".
SUBNETS = ["198.18.%d.0/24" % i for i in range(60, 100)]


def docker_subnets():
    """Every IPv4 subnet some Docker network of this engine holds."""
    ids = run(["docker", "network", "ls", "-q"]).stdout.split()
    nets = json.loads(run(["docker", "network", "inspect"] + ids).stdout) if ids else []
    return {c.get("Subnet") for n in nets for c in (n.get("IPAM") or {}).get("Config") or []}


def free_subnet(taken=None):
    """The first of SUBNETS that overlaps none of TAKEN (default: the Docker engine's)."""
    taken = docker_subnets() if taken is None else taken
    used = [ipaddress.ip_network(s, strict=False) for s in taken if s and ":" not in s]
    for s in SUBNETS:
        if not any(ipaddress.ip_network(s).overlaps(u) for u in used):
            return s
    raise TestbedError("no free /24 in 198.18.60.0-198.18.99.0 for the cluster's network "
                       "(docker network ls shows what holds them)")


def run(cmd, check=True, env=None, timeout=900):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TestbedError("%s did not end in %d s" % (" ".join(cmd[:4]), timeout)) from None
    if check and p.returncode != 0:
        raise TestbedError("%s failed (exit %d): %s" % (" ".join(cmd[:4]), p.returncode,
                                                         (p.stderr or p.stdout).strip()[-1500:]))
    return p


class _Counters:
    """{host: (bytes received, bytes sent)} of each container's eth0 (from /proc/PID/net/dev,
    the container's own network namespace)."""

    def __init__(self, cluster):
        self.cluster = cluster

    def counters(self):
        out = {}
        for h, c in self.cluster.containers().items():
            pid = c["State"]["Pid"]
            try:
                with open("/proc/%d/net/dev" % pid) as f:
                    for line in f:
                        name, _, rest = line.partition(":")
                        if name.strip() == "eth0":
                            v = rest.split()
                            out[h] = (int(v[0]), int(v[8]))
            except (OSError, ValueError):
                pass
        return out


class NotUp(TestbedError):
    """The cluster did not come up in time (the message says what each container showed): the
    one failure worth a second try from nothing."""


class BrokenCluster(TestbedError):
    """The cluster came up wrong, in a way a second try would only hide: the init container
    failed, or a healthcheck failed on an up cluster."""


class Containers(Cluster):
    __test__ = False

    def __init__(self, settings):
        self.cfg = settings
        self.fabric = _Counters(self)
        self.dead = set()
        self._cache = None
        self._volumes = set()   # every volume our containers have had: down removes them

    # ---- compose ---------------------------------------------------------------------------

    def env(self):
        e = dict(os.environ)
        e.update({"NETEC_IMAGE": self.cfg.image, "NETEC_DATANODES": str(self.cfg.datanodes),
                  "NETEC_ROUTE_ORDER": self.cfg.route_order,
                  "NETEC_BLOCK_SIZE": str(self.cfg.block_size), "NETEC_SUBNET": self.cfg.subnet})
        return e

    def compose(self, *args, check=True, timeout=900):
        return run(["docker-compose", "-p", self.cfg.project, "-f", COMPOSE] + list(args),
                   check=check, env=self.env(), timeout=timeout)

    @property
    def network(self):
        return "%s_netec" % self.cfg.project

    def up(self, progress=print):
        if self.cfg.subnet is None:
            self.cfg.subnet = free_subnet()
        progress("containers: project %s, %d DataNodes, image %s, network %s" % (
            self.cfg.project, self.cfg.datanodes, self.cfg.image, self.cfg.subnet))
        try:
            # compose itself fails when a container that others wait for is not healthy in
            # time (its healthcheck's retries), before any wait below
            self.compose("up", "-d", "--scale", "datanode=%d" % self.cfg.datanodes)
            self.wait_init()
            self.wait_live(self.cfg.datanodes)
            self.wait_out_of_safemode()
            self.wait_plugins()
        except BrokenCluster as e:
            raise BrokenCluster("%s\n%s" % (e, self.why_not_up())) from None
        except TestbedError as e:
            raise NotUp("%s\n%s" % (e, self.why_not_up())) from None
        self.check_healthchecks()
        progress("containers: up; NETEC policies added and enabled by the init container")

    def wait_init(self, timeout=300):
        """Until the one-shot init container has added and enabled the policies."""
        def done():
            c = self._by_service("init")
            if not c:
                return False
            st = c[0]["State"]
            if st["Status"] == "exited" and st["ExitCode"] != 0:
                raise BrokenCluster("the init container failed (exit %d): %s" % (
                    st["ExitCode"], self.logs(c[0]["Name"].lstrip("/"))[-1500:]))
            return st["Status"] == "exited"
        self.wait("the init container to add and enable the NETEC policies", done, timeout)

    def check_healthchecks(self, times=5):
        """Every role's healthcheck, run TIMES in a row on an up cluster, answers healthy each
        time: compose's retries hide a check that fails now and then, until a slower machine
        fails it every time (as CI once did: `grep -q` under pipefail killed the NameNode's
        check by SIGPIPE while the JMX answer was still being written)."""
        for service in ("namenode", "switch", "datanode"):
            found = self._by_service(service)
            if not found:
                raise BrokenCluster("no %s container on an up cluster" % service)
            name = found[0]["Name"].lstrip("/")
            for i in range(times):
                p = run(["docker", "exec", name, "/opt/netec/bin/entrypoint.sh", "healthy",
                         service], check=False, timeout=60)
                if p.returncode != 0:
                    raise BrokenCluster("the %s healthcheck failed on an up cluster (%s, run %d "
                                       "of %d, exit %d): %s" % (
                                           service, name, i + 1, times, p.returncode,
                                           (p.stdout + p.stderr).strip()[-500:]))

    def why_not_up(self):
        try:
            return self._why_not_up()
        except Exception as e:  # the diagnostics must not hide the failure they explain
            return "containers: (diagnostics failed: %s)" % e

    def _why_not_up(self):
        """What a cluster that did not come up shows: every container's state, the tail of
        the init container's log (it says what it waits for), and that of any container that
        is not running (a DataNode that died at start keeps the init waiting)."""
        self._cache = None
        lines, tails = [], []
        for c in self._inspect():
            name, st = c["Name"].lstrip("/"), c["State"]
            health = st.get("Health") or {}
            checks = health.get("Log") or []
            lines.append("  %s: %s%s%s" % (
                name, st["Status"],
                " (exit %d)" % st["ExitCode"] if st["Status"] == "exited" else "",
                ", %s" % health["Status"] if health.get("Status") else ""))
            if health.get("Status") == "unhealthy" and checks:
                # the last healthcheck's exit code and output (Docker keeps the last five)
                lines.append("    its last healthcheck: exit %s: %s" % (
                    checks[-1].get("ExitCode"), (checks[-1].get("Output") or "").strip()[-500:]))
            service = c["Config"]["Labels"].get("com.docker.compose.service")
            if service == "init" or st["Status"] != "running" or health.get("Status") == "unhealthy":
                tails.append("--- %s, its log's end:\n%s" % (name, self.logs(name)[-1500:]))
        return "containers:\n" + "\n".join(lines) + ("\n" + "\n".join(tails) if tails else "")

    def down(self):
        self._inspect()
        p = self.compose("down", "-v", "--remove-orphans", check=False)
        if p.returncode != 0:
            print("containers: docker-compose down failed (exit %d): %s" % (
                p.returncode, p.stderr.strip()[-800:]), file=sys.stderr)
        try:
            self._remove_network()
        finally:
            # volumes of containers compose replaced (force-recreate) outlive `down -v`; gone
            # also when the network stays (StaleNetwork: the engine's fault, reported after)
            left = run(["docker", "volume", "ls", "-q"], check=False).stdout.split()
            mine = [v for v in left if v in self._volumes]
            if mine:
                run(["docker", "volume", "rm", "-f"] + mine, check=False)
            self._cache = None

    def _remove_network(self, timeout=30):
        """Compose's `down` can leave the network when the engine still lists an endpoint of a
        killed container; such an endpoint is disconnected by force, then the network removed.
        Raises if it stays: a left network would block the next cluster's subnet; StaleNetwork
        when the engine lists no endpoint yet counts one (only its restart clears that)."""
        deadline = time.time() + timeout
        while True:
            p = run(["docker", "network", "inspect", self.network], check=False)
            if p.returncode != 0:
                return
            listed = [ep["Name"] for n in json.loads(p.stdout)
                      for ep in (n.get("Containers") or {}).values()]
            for name in listed:
                run(["docker", "network", "disconnect", "-f", self.network, name], check=False)
            rm = run(["docker", "network", "rm", self.network], check=False)
            if rm.returncode == 0:
                return
            if time.time() > deadline:
                why = rm.stderr.strip()[-800:]
                if not listed and "active endpoints" in why:
                    raise StaleNetwork(
                        "network %s not removed: the Docker engine counts an endpoint on it "
                        "that no container holds (a known engine bug, moby/moby#42119); its "
                        "containers and volumes are gone, and `docker network rm %s` works "
                        "once the engine has restarted" % (self.network, self.network))
                raise TestbedError("network %s not removed: %s" % (self.network, why))
            time.sleep(1)

    # ---- hosts -----------------------------------------------------------------------------

    def _inspect(self):
        if self._cache is None or time.time() - self._cache[0] > 1.0:
            ids = run(["docker", "ps", "-a", "-q", "--filter",
                       "label=com.docker.compose.project=%s" % self.cfg.project]).stdout.split()
            info = json.loads(run(["docker", "inspect"] + ids).stdout) if ids else []
            self._cache = (time.time(), info)
            for c in info:
                self._volumes.update(m["Name"] for m in c["Mounts"] if m.get("Type") == "volume")
        return self._cache[1]

    def _by_service(self, service):
        return sorted((c for c in self._inspect()
                       if c["Config"]["Labels"].get("com.docker.compose.service") == service),
                      key=lambda c: int(c["Config"]["Labels"].get(
                          "com.docker.compose.container-number", "0")))

    def containers(self):
        """{host: docker inspect of its container}."""
        out = {}
        for service, host in SERVICES.items():
            c = self._by_service(service)
            if c:
                out[host] = c[0]
        for i, c in enumerate(self._by_service("datanode")):
            out["dn%02d" % (i + 1)] = c
        return out

    def container(self, host):
        c = self.containers().get(host)
        if not c:
            raise TestbedError("no container for host " + host)
        return c

    @property
    def datanodes(self):
        return sorted(h for h in self.containers() if h.startswith("dn"))

    def ip(self, host):
        nets = self.container(host)["NetworkSettings"]["Networks"]
        for n in nets.values():
            if n.get("IPAddress"):
                return n["IPAddress"]
        raise TestbedError("container of %s has no address (not running?)" % host)

    def host_of(self, address):
        ip = address.split(":")[0]
        for h, c in self.containers().items():
            if any(n.get("IPAddress") == ip for n in c["NetworkSettings"]["Networks"].values()):
                return h
        raise TestbedError("no container has address " + address)

    def alive(self, host):
        return self.container(host)["State"]["Running"]

    def data_dir(self, host):
        for m in self.container(host)["Mounts"]:
            if m["Destination"] == "/data":
                return os.path.join(m["Source"], "dn")
        raise TestbedError("container of %s has no /data volume" % host)

    def logs(self, name):
        p = run(["docker", "logs", name], check=False)
        return p.stdout + p.stderr

    def log(self, host):
        path = os.path.join("/tmp", "netec-containers-%s.log" % host)
        with open(path, "w") as f:
            f.write(self.logs(self.container(host)["Name"].lstrip("/")))
        return path

    def kill(self, host, sig=9):
        """docker kill (SIGKILL by default) of HOST's container; its volume stays."""
        run(["docker", "kill", "-s", str(sig), self.container(host)["Name"].lstrip("/")])
        self._cache = None
        if host.startswith("dn"):
            self.dead.add(host)

    def restart_datanodes(self, route_order=None, inec_scheme=None, revive=False):
        """Every DataNode (and the client) recreated with a new route order; a live one keeps
        its volume. With REVIVE, killed DataNodes are removed with their volumes and new, empty
        ones take their place."""
        if inec_scheme:
            raise TestbedError("the container cluster runs the default INEC scheme")
        self.cfg.route_order = route_order or self.cfg.route_order
        if revive:
            for h in sorted(self.dead):
                run(["docker", "rm", "-f", "-v", self.container(h)["Name"].lstrip("/")])
            self.dead.clear()
        self._cache = None
        self.compose("up", "-d", "--no-deps", "--force-recreate", "--scale",
                     "datanode=%d" % self.cfg.datanodes, "datanode", "client")
        self._cache = None
        self.wait_live(len(self.live_datanodes()))
        self.wait_plugins()

    # ---- the client container --------------------------------------------------------------

    def client(self, main, *args, check=True):
        p = run(["docker", "exec", self.container("cl")["Name"].lstrip("/"),
                 "/opt/netec/bin/entrypoint.sh", "java", main] + list(args), check=False)
        if p.returncode != 0:
            if check:
                why = [l for l in p.stderr.splitlines() if "Exception" in l or "Error" in l]
                raise TestbedError("%s in the client container failed (exit %d): %s" % (
                    main.rsplit(".", 1)[1], p.returncode,
                    (why[0] if why else p.stderr.strip()[-500:]).strip()))
            return None
        return p.stdout

    def cpu_seconds(self):
        """{host: CPU seconds} of every running container, from its cgroup (v1 or v2)."""
        out = {}
        for h, c in self.containers().items():
            cid = c["Id"]
            for path, scale in (("/sys/fs/cgroup/cpuacct/docker/%s/cpuacct.usage" % cid, 1e-9),
                                ("/sys/fs/cgroup/cpu,cpuacct/docker/%s/cpuacct.usage" % cid,
                                 1e-9)):
                try:
                    with open(path) as f:
                        out[h] = int(f.read()) * scale
                    break
                except (OSError, ValueError):
                    continue
            else:
                for path in glob.glob("/sys/fs/cgroup/**/*%s*/cpu.stat" % cid, recursive=True):
                    with open(path) as f:
                        for line in f:
                            if line.startswith("usage_usec"):
                                out[h] = int(line.split()[1]) * 1e-6
        return out


def main(argv=None):
    """docker/run-demo.sh: the demo on the container cluster."""
    import argparse
    import signal
    import sys
    from . import scenario

    p = argparse.ArgumentParser(prog="docker/run-demo.sh", description=(
        "Starts docker/compose.yaml's cluster, runs the demo (for switch, inec and native in "
        "turn: NETEC-6-3 files written, the DataNode container holding most units killed, "
        "every lost block rebuilt through that route and compared byte for byte), prints the "
        "table and takes the cluster down. Exit 0 only if every byte matched."))
    p.add_argument("--image", default="netec-hdfs:3.4.3")
    p.add_argument("--project", default="netec")
    p.add_argument("--datanodes", type=int, default=10)
    p.add_argument("--block-mb", type=int, default=4)
    p.add_argument("--keep", action="store_true", help="leave the cluster up afterwards")
    p.add_argument("--subnet", default=None,
                   help="the cluster network's IPv4 subnet (default: the first /24 of "
                        "198.18.60.0-198.18.99.0 no Docker network holds)")
    a = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    def cluster():
        return Containers(Settings(image=a.image, project=a.project, datanodes=a.datanodes,
                                   block_size=a.block_mb << 20, subnet=a.subnet))
    c = cluster()
    try:
        try:
            c.up()
        except NotUp as e:
            # Once, in CI, the init container did not finish in 300 s and nothing here could
            # say why; what the containers showed is printed, and the cluster is made again
            # from nothing, once.
            print("run-demo: warning: the cluster did not come up; taking it down and starting "
                  "it once more. %s" % e, file=sys.stderr)
            c.down()
            left = run(["docker", "ps", "-aq", "--filter",
                        "label=com.docker.compose.project=%s" % a.project]).stdout.split()
            if left:
                raise TestbedError("the first cluster's containers outlived its down: %s"
                                   % " ".join(left))
            c = cluster()
            c.up()
        return 0 if scenario.demo_routes(c) else 1
    except TestbedError as e:
        print("run-demo: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("run-demo: interrupted", file=sys.stderr)
        return 130
    finally:
        if not a.keep:
            try:
                c.down()
            except StaleNetwork as e:
                # the engine's fault, not the cluster's: the demo's verdict stands
                print("run-demo: warning: %s" % e, file=sys.stderr)
            except TestbedError as e:
                print("run-demo: %s" % e, file=sys.stderr)
                return 1


if __name__ == "__main__":
    raise SystemExit(main())
