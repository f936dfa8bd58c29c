"""Hadoop configuration and command lines for the testbed's daemons.

The plugin is installed as README.md tells an operator: the jar (with libnetec.so inside) on
every daemon's classpath, the keys of conf/hdfs-site-netec.xml and conf/core-site-netec.xml
merged into each host's own hdfs-site.xml / core-site.xml, policies added with `hdfs ec`
(ECAdmin's main). Hadoop comes from the Maven jars the build resolves.
"""

import os
import subprocess
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

from .net import TestbedError

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JAR = os.path.join(REPO, "hdfs-netec-policy", "target", "hdfs-netec-policy-0.1.0-SNAPSHOT.jar")

NAMENODE = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE = "org.apache.hadoop.hdfs.server.datanode.DataNode"
SWITCH = "io.netec.hdfs.switchroute.SoftwareSwitchMain"
PROBE = "io.netec.hdfs.tools.NetecProbe"
ECADMIN = "org.apache.hadoop.hdfs.tools.ECAdmin"
FSSHELL = "org.apache.hadoop.fs.FsShell"

# `hdfs SUBCOMMAND` -> its main class, as Hadoop's bin/hdfs maps them (the testbed has
# Hadoop's jars from Maven, not a distribution with its scripts).
HDFS_SUBCOMMANDS = {
    "dfs": FSSHELL,
    "ec": ECADMIN,
    "fsck": "org.apache.hadoop.hdfs.tools.DFSck",
    "debug": "org.apache.hadoop.hdfs.tools.DebugAdmin",
    "dfsadmin": "org.apache.hadoop.hdfs.tools.DFSAdmin",
    "getconf": "org.apache.hadoop.hdfs.tools.GetConf",
    "version": "org.apache.hadoop.util.VersionInfo",
}

SWITCH_CONTROL_PORT = 50310
SWITCH_DATA_PORT = 50311
SWITCH_METRICS_PORT = 50312
NN_RPC_PORT = 8020
NN_HTTP_PORT = 9870
DN_XFER_PORT = 9866
DN_HTTP_PORT = 9864
DN_IPC_PORT = 9867  # Hadoop's default dfs.datanode.ipc.address (dfsadmin -triggerBlockReport)


def build(hadoop_version, log):
    """Builds the plugin jar (mvn package) and returns the daemons' classpath: the jar plus
    Hadoop's jars at HADOOP_VERSION. Output goes to LOG; a failure raises with its tail."""
    profile = [] if hadoop_version == "3.4.3" else ["-Phadoop-3.5"]
    if hadoop_version not in ("3.4.3", "3.5.0"):
        raise TestbedError("--hadoop %s: 3.4.3 or 3.5.0" % hadoop_version)
    cpfile = os.path.join(REPO, "hdfs-netec-policy", "target",
                          "testbed-classpath-%s.txt" % hadoop_version)
    steps = [["mvn", "-B", "-ntp", "-q", "-DskipTests", "package"] + profile,
             ["mvn", "-B", "-ntp", "-q", "-pl", "hdfs-netec-policy", "dependency:build-classpath",
              "-Dmdep.includeScope=compile", "-Dmdep.outputFile=" + cpfile] + profile]
    with open(log, "a") as out:
        for cmd in steps:
            if subprocess.run(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT).returncode:
                with open(log) as f:
                    tail = f.read()[-3000:]
                raise TestbedError("build failed (%s):\n%s" % (" ".join(cmd), tail))
    with open(cpfile) as f:
        return JAR + ":" + f.read().strip()


def read_properties(path):
    """name -> value of a Hadoop XML configuration file."""
    props = {}
    for p in ET.parse(path).getroot().iter("property"):
        props[p.findtext("name").strip()] = (p.findtext("value") or "").strip()
    return props


def write_site(path, props):
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<configuration>\n')
        for k in sorted(props):
            f.write("  <property><name>%s</name><value>%s</value></property>\n"
                    % (escape(k), escape(str(props[k]))))
        f.write("</configuration>\n")


LOG4J = """log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.Target=System.err
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=%d{ISO8601} %p %c{1}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
"""


def write_conf(conf_dir, core, hdfs):
    """A daemon's conf dir: core-site.xml and hdfs-site.xml are the given properties merged
    over the plugin's snippets (conf/*-netec.xml), as an operator merges them."""
    os.makedirs(conf_dir, exist_ok=True)
    c = read_properties(os.path.join(REPO, "conf", "core-site-netec.xml"))
    c.update(core)
    h = read_properties(os.path.join(REPO, "conf", "hdfs-site-netec.xml"))
    h.update(hdfs)
    write_site(os.path.join(conf_dir, "core-site.xml"), c)
    write_site(os.path.join(conf_dir, "hdfs-site.xml"), h)
    with open(os.path.join(conf_dir, "log4j.properties"), "w") as f:
        f.write(LOG4J)


def hdfs_script():
    """A POSIX sh `hdfs` command: Hadoop's subcommands over $NETEC_TESTBED_CLASSPATH with the
    configuration in $HADOOP_CONF_DIR, logging WARN and up to stderr as Hadoop's does."""
    cases = "\n".join("  %s) main=%s ;;" % kv for kv in sorted(HDFS_SUBCOMMANDS.items()))
    return """#!/bin/sh
# hdfs SUBCOMMAND [ARGS...] on a testbed host (written by bin/netec-testbed exec): Hadoop's
# own tools, over the testbed's classpath and the host's configuration ($HADOOP_CONF_DIR).
case "${1:-}" in
%s
  *) echo "usage: hdfs %s [ARGS...]" >&2; exit 2 ;;
esac
shift
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" -Xmx512m -XX:+UseSerialGC \\
  -Dlog4j.configuration="file:$NETEC_TESTBED_BIN/log4j.properties" \\
  -Djava.io.tmpdir="$NETEC_TESTBED_TMP" \\
  -cp "$HADOOP_CONF_DIR:$NETEC_TESTBED_CLASSPATH" "$main" "$@"
""" % (cases, "|".join(sorted(HDFS_SUBCOMMANDS)))


CLI_LOG4J = """log4j.rootLogger=WARN, err
log4j.appender.err=org.apache.log4j.ConsoleAppender
log4j.appender.err.Target=System.err
log4j.appender.err.layout=org.apache.log4j.PatternLayout
log4j.appender.err.layout.ConversionPattern=%d{ISO8601} %p %c{1}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
"""


def java_command(conf_dir, classpath, main, args=(), heap="512m", tmp=None, options=()):
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") \
        if os.environ.get("JAVA_HOME") else "java"
    cmd = [java, "-Xmx" + heap, "-XX:+UseSerialGC"] + list(options) + [
        "-Dlog4j.configuration=file:" + os.path.join(conf_dir, "log4j.properties"),
        "-Dhadoop.log.dir=" + conf_dir]
    if tmp:
        # libnetec.so is extracted from the jar here, not into the machine's /tmp.
        cmd.append("-Djava.io.tmpdir=" + tmp)
    return cmd + ["-cp", conf_dir + ":" + classpath, main] + list(args)
