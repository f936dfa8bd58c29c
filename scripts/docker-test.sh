#!/usr/bin/env bash
# The container cluster, for real: installs the Docker engine and docker-compose from Debian's
# packages if missing, starts dockerd if none runs (address pools in 198.18.0.0/15; only a
# daemon started here is stopped here), builds a local Debian base (debootstrap + docker
# import: no image can be pulled here), builds the NetEC-HDFS image on it, runs
# docker/run-demo.sh (switch, inec and native in turn; every rebuilt block compared byte for
# byte) and removes everything it made (containers, network, volumes, images), also on failure.
# Where no Docker engine can run, one SKIP line says why; NETEC_REQUIRE_ENV=1 makes it a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

skip() {
  if [ "${NETEC_REQUIRE_ENV:-0}" = 1 ]; then
    echo "FAIL: docker test cannot run: $* (NETEC_REQUIRE_ENV=1)" >&2
    exit 1
  fi
  echo "SKIP: docker test: $*"
  exit 0
}

[ "$(id -u)" = 0 ] || skip "needs root (the Docker engine)"
need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v docker-compose >/dev/null || need+=(docker-compose)
command -v debootstrap >/dev/null || need+=(debootstrap)
if ((${#need[@]})); then
  echo "docker-test: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
[ -d /sys/fs/cgroup ] || skip "no cgroup file system"

run=$(mktemp -d /tmp/netec-docker-test.XXXXXX)
tag=$$
project=netec-test-$tag
base=netec-base:bookworm-$tag
image=netec-hdfs:test-$tag
started_pid=
cleanup() {
  set +e
  docker-compose -p "$project" -f docker/compose.yaml down -v --remove-orphans >/dev/null 2>&1
  docker network rm "${project}_netec" >/dev/null 2>&1
  docker rmi -f "$image" "$base" >/dev/null 2>&1
  if [ -n "$started_pid" ]; then
    stop_dockerd
  fi
  rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_dockerd() {
  dockerd --bip 198.18.250.1/24 --default-address-pool base=198.19.0.0/16,size=24 \
    --pidfile "$run/dockerd.pid" >>"$run/dockerd.log" 2>&1 &
  started_pid=$!
  for _ in $(seq 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1
}

stop_dockerd() {
  kill "$started_pid" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$started_pid" 2>/dev/null || break; sleep 0.1; done
}

if ! docker info >/dev/null 2>&1; then
  echo "docker-test: starting dockerd (bridge 198.18.250.1/24, pools 198.19.0.0/16)"
  start_dockerd || {
    tail -20 "$run/dockerd.log" >&2
    skip "dockerd did not start (log above)"
  }
fi

# Networks of earlier runs of this script whose shell is gone (a run killed before its
# cleanup): ours by name and label, attached to nothing, so removed. The cluster takes the
# first free /24 anyway (testbed/netec_testbed/containers.py), this only keeps them from piling up.
for net in $(docker network ls --filter label=com.docker.compose.network=netec --format '{{.Name}}'); do
  case "$net" in netec-test-*_netec) ;; *) continue ;; esac
  pid=${net#netec-test-}; pid=${pid%_netec}
  [[ "$pid" =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null || continue
  [ "$(docker network inspect -f '{{len .Containers}}' "$net")" = 0 ] || continue
  docker network rm "$net" >/dev/null && echo "docker-test: removed $net, left by an earlier run"
done

echo "docker-test: local base image from Debian's packages (debootstrap minbase bookworm)"
debootstrap --variant=minbase bookworm "$run/rootfs" http://deb.debian.org/debian \
  >"$run/debootstrap.log" 2>&1 || { tail -20 "$run/debootstrap.log" >&2; exit 1; }
tar -C "$run/rootfs" -c . | docker import - "$base" >/dev/null
rm -rf "$run/rootfs"

echo "docker-test: building $image on $base"
docker/build.sh --base "$base" --tag "$image" >/dev/null

echo "docker-test: docker/run-demo.sh on project $project"
docker volume ls -q | sort >"$run/volumes-before"
docker/run-demo.sh --image "$image" --project "$project"
# run-demo took its cluster down: nothing of it may be left
left=$(docker ps -a -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || { echo "docker-test: containers left: $left" >&2; exit 1; }
# The engine can keep counting an endpoint of a killed container on a network no container
# holds any more (moby/moby#42119; run-demo warns of it): only its restart clears that, so
# the network goes after a restart of the dockerd this script started, never of another.
net="${project}_netec"
if docker network ls --format '{{.Name}}' | grep -x "$net" >/dev/null && [ -n "$started_pid" ] &&
    [ "$(docker network inspect -f '{{len .Containers}}' "$net")" = 0 ]; then
  echo "docker-test: the engine kept a stale endpoint on $net; restarting the dockerd started" \
    "here to remove it"
  stop_dockerd
  start_dockerd || { tail -20 "$run/dockerd.log" >&2; exit 1; }
  docker network rm "$net" >/dev/null
fi
docker network ls --format '{{.Name}}' | grep "^${project}_" >/dev/null &&
  { echo "docker-test: network ${project}_* left" >&2; exit 1; }
new=$(docker volume ls -q | sort | comm -13 "$run/volumes-before" -)
[ -z "$new" ] || { echo "docker-test: volumes left: $new" >&2; exit 1; }
echo "docker-test: passed; containers, network and volumes removed"
