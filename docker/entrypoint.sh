#!/usr/bin/env bash
# The roles of the NetEC-HDFS image: namenode | datanode | switch | init | client, or
# `java MAIN ARGS...` (any Hadoop or NetEC tool with this container's configuration).
#
# Configuration, as an operator merges it: core-site.xml and hdfs-site.xml are the plugin's
# snippets (/opt/netec/conf/*-netec.xml: mount conf/ there to change them) followed by the
# KEY=VALUE lines of NETEC_CORE_SITE and NETEC_HDFS_SITE (later definitions win in Hadoop).
set -euo pipefail
conf=${HADOOP_CONF_DIR:-/etc/hadoop}
netec=/opt/netec/conf

xml() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' <<<"$1"; }

site() { # FILE SNIPPET "KEY=VALUE lines": written whole, then renamed into place
  {
    echo '<?xml version="1.0"?>'
    echo '<configuration>'
    sed -e '1,/<configuration>/d' -e '/<\/configuration>/,$d' "$2"
    while IFS= read -r kv; do
      kv=${kv#"${kv%%[![:space:]]*}"}
      [ -z "$kv" ] && continue
      printf '  <property><name>%s</name><value>%s</value></property>\n' \
        "$(xml "${kv%%=*}")" "$(xml "${kv#*=}")"
    done <<<"$3"
    echo '</configuration>'
  } >"$1.tmp"
  mv -f "$1.tmp" "$1"
}

role=${1:-client}
mkdir -p "$conf" /data
# Daemons write the configuration at start; healthchecks and tools (`java`, run by docker exec
# while a daemon reads it) use what is there.
case "$role" in healthy | java) [ -f "$conf/hdfs-site.xml" ] ;; *) false ;; esac || {
  site "$conf/core-site.xml" "$netec/core-site-netec.xml" "${NETEC_CORE_SITE:-}"
  site "$conf/hdfs-site.xml" "$netec/hdfs-site-netec.xml" "${NETEC_HDFS_SITE:-}"
}
[ -f "$conf/log4j.properties" ] || cat >"$conf/log4j.properties" <<'LOG'
log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.Target=System.err
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=%d{ISO8601} %p %c{1}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
LOG

run() { # MAIN ARGS...: a JVM with this container's configuration
  exec java -Xmx"${NETEC_HEAP:-512m}" -XX:+UseSerialGC \
    -Dlog4j.configuration="file:$conf/log4j.properties" -Dhadoop.log.dir=/data/logs \
    -cp "$conf:/opt/hadoop/lib/*" "$@"
}

# The NameNode's JMX bean QUERY as JSON text, over bash's /dev/tcp (no JVM, no curl).
# The whole answer is read within 10 s: a server that holds the connection open fails the
# query instead of hanging its caller (the init's wait, a healthcheck).
jmx() { # HOST QUERY
  exec 3<>"/dev/tcp/$1/9870" || return 1
  printf 'GET /jmx?qry=%s HTTP/1.0\r\nHost: %s\r\n\r\n' "$2" "$1" >&3
  timeout 10 cat <&3
  exec 3<&-
}

me=$(hostname -i | awk '{print $1}')
shift || true
case "$role" in
  namenode)
    [ -d /data/name/current ] ||
      (run org.apache.hadoop.hdfs.server.namenode.NameNode -format -nonInteractive)
    run org.apache.hadoop.hdfs.server.namenode.NameNode ;;
  datanode)
    run org.apache.hadoop.hdfs.server.datanode.DataNode ;;
  switch)
    run io.netec.hdfs.switchroute.SoftwareSwitchMain --bind "$me" --control-port 50310 \
      --data-port 50311 --metrics-port 50312 "$@" ;;
  init)
    # What an HDFS admin does once: add the NETEC policies and enable them.
    want=${NETEC_DATANODES:-9}
    live() {
      jmx namenode Hadoop:service=NameNode,name=FSNamesystemState 2>/dev/null |
        sed -n 's/.*"NumLiveDataNodes" *: *\([0-9]*\).*/\1/p'
    }
    echo "netec init: waiting for $want live DataNodes"
    seen=
    until [ "${n:-}" -ge "$want" ] 2>/dev/null; do
      sleep 2
      n=$(live) || n=
      # each change said once, so a cluster that never fills shows how far it came
      [ "${n:-none}" = "$seen" ] || { echo "netec init: ${n:-no answer from the NameNode} live"; seen=${n:-none}; }
    done
    if ! (run org.apache.hadoop.hdfs.tools.ECAdmin -listPolicies) | grep NETEC-6-3-1024k >/dev/null; then
      (run org.apache.hadoop.hdfs.tools.ECAdmin -addPolicies -policyFile "$netec/netec-policies.xml")
    fi
    for p in ${NETEC_POLICIES:-NETEC-3-2-1024k NETEC-6-3-1024k NETEC-10-4-1024k}; do
      (run org.apache.hadoop.hdfs.tools.ECAdmin -enablePolicy -policy "$p")
    done
    echo "netec init: policies added and enabled" ;;
  client)
    exec sleep infinity ;;
  healthy)
    # healthchecks: `healthy namenode|datanode|switch`
    case "${1:-}" in
      # grep reads the whole answer (-q would stop at the match, and under pipefail the
      # jmx still writing would die of SIGPIPE and fail a healthy NameNode's check)
      namenode) jmx 127.0.0.1 Hadoop:service=NameNode,name=NameNodeInfo |
        grep '"Safemode" *: *""' >/dev/null ;;
      datanode) exec bash -c ': </dev/tcp/127.0.0.1/9866' ;;
      switch) exec bash -c ": </dev/tcp/$me/50310" ;;
      *) echo "healthy: namenode, datanode or switch" >&2; exit 2 ;;
    esac ;;
  java)
    run "$@" ;;
  *)
    echo "netec-hdfs image: unknown role '$role' (namenode, datanode, switch, init, client," \
      "healthy ROLE, java MAIN ARGS...)" >&2
    exit 2 ;;
esac
