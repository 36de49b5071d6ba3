#!/bin/sh
# engram on a three-node JetStream cluster, on loopback, for people to try.
#
#   deploy/cluster.sh start    build, start three nats-server nodes (deploy/cluster/n*.conf)
#                              and the workers apart, print how to reach them
#   deploy/cluster.sh stop     stop the workers, then the nodes (by their pid files)
#   deploy/cluster.sh status   what runs
#   deploy/cluster.sh build    only build the binaries (CI checks that this leaves the checkout as it was)
#
# Everything lives under $ENGRAM_CLUSTER_DIR (default ./data/cluster): the
# binaries, the users (nats-auth/, made once), each node's store, each
# worker's data dir, logs and pid files. Delete it to start from nothing.
#
# Ports: NATS clients 4321-4323, routes 6321-6323, monitoring 8321-8323;
# HTTP: ingest 7520 and 7530, retrievers 7521, 7531, 7541 and 7551.
#
# INGESTS, RETRIEVERS, EXTRACTORS and CONSOLIDATORS (default 2, 4, 2 and 2)
# set how many of each run. They share the users' PARTITIONS (default 8, the
# most instances of a kind that can share the work; every worker gets the
# same number): each partition is held by one instance and moves to another
# when it dies. Each retriever keeps the read model of the partitions it
# holds, about a quarter of the users each, and any ingest or retriever
# answers for every user by asking the retriever that holds the user's
# partition (docs/scale.md); `engram stats --partitions` shows who holds what.
set -eu

DIR=${ENGRAM_CLUSTER_DIR:-./data/cluster}
INGESTS=${INGESTS:-2}
RETRIEVERS=${RETRIEVERS:-4}
EXTRACTORS=${EXTRACTORS:-2}
CONSOLIDATORS=${CONSOLIDATORS:-2}
PARTITIONS=${PARTITIONS:-8}
URLS=nats://127.0.0.1:4321,nats://127.0.0.1:4322,nats://127.0.0.1:4323
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# launch NAME CMD...: starts CMD in the background with its log and pid file.
launch() {
	name=$1
	shift
	if running "$DIR/pids/$name.pid"; then
		echo "  $name already runs (pid $(cat "$DIR/pids/$name.pid"))"
		return
	fi
	"$@" >"$DIR/logs/$name.log" 2>&1 &
	echo $! >"$DIR/pids/$name.pid"
	echo "  $name (pid $!, log $DIR/logs/$name.log)"
}

# wait_for WHAT CMD...: polls CMD for up to 60 s.
wait_for() {
	what=$1
	shift
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -ge 300 ]; then
			echo "timed out waiting for $what; see $DIR/logs" >&2
			exit 1
		fi
		sleep 0.2
	done
}

healthy() { curl -fsS "http://127.0.0.1:$1/healthz" >/dev/null; }

build() {
	mkdir -p "$DIR/bin"
	echo "building into $DIR/bin"
	go build -mod=readonly -o "$DIR/bin/" ./cmd/...
	# nats-server at the version go.mod names (the one the tests embed),
	# built against a copy of go.mod and go.sum: building a main package
	# engram does not import may want go.sum lines engram does not need,
	# and the checkout must stay as it was (go mod tidy would drop them).
	mkdir -p "$DIR/modfile"
	cp go.mod "$DIR/modfile/go.mod"
	cp go.sum "$DIR/modfile/go.sum"
	go build -mod=mod -modfile "$DIR/modfile/go.mod" -o "$DIR/bin/nats-server" github.com/nats-io/nats-server/v2
}

start() {
	mkdir -p "$DIR/logs" "$DIR/pids"
	build
	# Users: seeds in $DIR/nats-auth (0600), public keys in auth.conf.
	"$DIR/bin/engram" creds --data-dir "$DIR" --nats-conf "$DIR/auth.conf" >"$DIR/creds.txt"
	if [ ! -f "$DIR/routes.conf" ]; then
		pass=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
		umask 077
		cat >"$DIR/routes.conf" <<EOF
# Made by deploy/cluster.sh: only the three nodes may join as routes.
authorization { user: route, password: "$pass" }
routes: [
  "nats-route://route:$pass@127.0.0.1:6321"
  "nats-route://route:$pass@127.0.0.1:6322"
  "nats-route://route:$pass@127.0.0.1:6323"
]
EOF
		umask 022
	fi
	echo "starting the nodes"
	for n in 1 2 3; do
		cp "$HERE/cluster/n$n.conf" "$DIR/n$n.conf"
		(cd "$DIR" && launch "nats-$n" bin/nats-server -c "n$n.conf")
	done
	for n in 1 2 3; do
		wait_for "node $n" curl -fsS "http://127.0.0.1:832$n/healthz"
	done
	# Workers may not create or change streams: the operator sets them up.
	echo "setting up the streams (as the operator)"
	ENGRAM_NATS_URL=$URLS ENGRAM_NATS_REPLICAS=3 "$DIR/bin/engram" streams apply --data-dir "$DIR" \
		>"$DIR/logs/streams.log" 2>&1 || {
		cat "$DIR/logs/streams.log" >&2
		exit 1
	}
	echo "starting the workers"
	# Each worker connects as its own kind (ingest.nk, retriever.nk, …),
	# with only what that kind does (docs/nats.md).
	worker() { # worker BINARY INDEX [HTTP ADDR]
		name=$1-$2
		mkdir -p "$DIR/$name"
		if [ $# -ge 3 ]; then
			launch "$name" env ENGRAM_NATS_URL=$URLS ENGRAM_NATS_NKEY_DIR="$DIR/nats-auth" \
				ENGRAM_NATS_REPLICAS=3 ENGRAM_DATA_DIR="$DIR/$name" ENGRAM_INSTANCE="$name" \
				ENGRAM_PARTITIONS="$PARTITIONS" ENGRAM_HTTP_ADDR="$3" "$DIR/bin/$1"
		else
			launch "$name" env ENGRAM_NATS_URL=$URLS ENGRAM_NATS_NKEY_DIR="$DIR/nats-auth" \
				ENGRAM_NATS_REPLICAS=3 ENGRAM_DATA_DIR="$DIR/$name" ENGRAM_INSTANCE="$name" \
				ENGRAM_PARTITIONS="$PARTITIONS" "$DIR/bin/$1"
		fi
	}
	i=1
	while [ $i -le "$INGESTS" ]; do worker ingest $i "127.0.0.1:75$((i + 1))0"; i=$((i + 1)); done
	i=1
	while [ $i -le "$RETRIEVERS" ]; do worker retriever $i "127.0.0.1:75$((i + 1))1"; i=$((i + 1)); done
	i=1
	while [ $i -le "$EXTRACTORS" ]; do worker extractor $i; i=$((i + 1)); done
	i=1
	while [ $i -le "$CONSOLIDATORS" ]; do worker consolidator $i; i=$((i + 1)); done
	wait_for "ingest-1" healthy 7520
	wait_for "retriever-1" healthy 7521
	cat <<EOF

engram runs on a three-node cluster (MEMORY and DEADLETTER have three replicas).
  ingest:    http://127.0.0.1:7520/v1/events  (and :7530)
  retriever: http://127.0.0.1:7521            (and :7531, :7541, :7551) every other route; any of them,
             or an ingest, answers for every user from the retriever that holds the user's partition
  who holds: ENGRAM_NATS_NKEY=$DIR/nats-auth/operator.nk ENGRAM_PARTITIONS=$PARTITIONS
             $DIR/bin/engram stats --partitions --nats-url $URLS
  nats CLI:  nats context save engram-cluster --server $URLS --nkey $DIR/nats-auth/operator.nk --select
             nats stream info MEMORY
  agents:    see $DIR/creds.txt (use --server $URLS)
  stop:      make cluster-stop   (or deploy/cluster.sh stop)
EOF
}

stop() {
	# Workers first, then the nodes: the reverse of start.
	for f in "$DIR"/pids/*.pid; do
		[ -e "$f" ] || continue
		case $(basename "$f") in nats-*) continue ;; esac
		stop_one "$f"
	done
	for f in "$DIR"/pids/nats-*.pid; do
		[ -e "$f" ] || continue
		stop_one "$f"
	done
}

stop_one() {
	pid=$(cat "$1")
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 150 ]; do
			sleep 0.2
			i=$((i + 1))
		done
		echo "  stopped $(basename "$1" .pid) (pid $pid)"
	fi
	rm -f "$1"
}

status() {
	for f in "$DIR"/pids/*.pid; do
		[ -e "$f" ] || { echo "nothing runs"; return; }
		if running "$f"; then s=runs; else s=stopped; fi
		echo "  $(basename "$f" .pid): $s (pid $(cat "$f"))"
	done
}

case ${1:-} in
start) start ;;
build) build ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status|build" >&2
	exit 2
	;;
esac
