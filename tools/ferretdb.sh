#!/usr/bin/env bash
# Builds, starts and stops the FerretDB v1 servers used by mongoscope's
# interop tests (see tools/ferretdb/README.md).
#
#   tools/ferretdb.sh build   build both binaries into .cache/bin
#   tools/ferretdb.sh start   start both servers, wait for them, write the env file
#   tools/ferretdb.sh stop    stop both servers (idempotent) and remove their data
#   tools/ferretdb.sh env     print the env file (KEY=value lines)
#
# Two servers run over SQLite in throwaway directories:
#   - ferretdb-embedded (tools/ferretdb/main.go), no authentication,
#     on 127.0.0.1:$FERRETDB_PORT (27099): MONGOSCOPE_FERRETDB_URI.
#   - FerretDB's own command with --test-enable-new-auth (SCRAM-SHA-1 and
#     SCRAM-SHA-256) and a user created at start-up by --setup-*, on
#     127.0.0.1:$FERRETDB_AUTH_PORT (27098): MONGOSCOPE_FERRETDB_AUTH_URI.
#     The embeddable package of FerretDB v1 cannot turn authentication on.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-go}
bin=${FERRETDB_BIN_DIR:-$root/.cache/bin}
run=${FERRETDB_RUN_DIR:-$root/.cache/ferretdb}
port=${FERRETDB_PORT:-27099}
auth_port=${FERRETDB_AUTH_PORT:-27098}
auth_user=${FERRETDB_AUTH_USER:-mongoscope}
env_file=$run/env

log() { echo "ferretdb: $*" >&2; }

build() {
	local mod=$root/tools/ferretdb
	local start=$SECONDS
	mkdir -p "$bin"
	(cd "$mod" && "$GO" build -buildvcs=false -o "$bin/ferretdb-embedded" .)

	# FerretDB's own command panics at start unless build/version/version.txt
	# names its version, and the copy in the module cache has no such file
	# (FerretDB's release build generates it). So build the command from a
	# scratch copy of the same module version with that file added, as
	# FerretDB's build documentation says to do by hand. The copy lives
	# outside the work tree so gofmt and go vet never walk it.
	local version dir src
	version=$(cd "$mod" && "$GO" list -m -f '{{.Version}}' github.com/FerretDB/FerretDB)
	dir=$(cd "$mod" && "$GO" mod download -json "github.com/FerretDB/FerretDB@$version" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then
		log "cannot find github.com/FerretDB/FerretDB@$version in the module cache"
		return 1
	fi
	src=${TMPDIR:-/tmp}/mongoscope-ferretdb-src-$version
	rm -rf "$src"
	cp -R "$dir" "$src"
	chmod -R u+w "$src"
	echo "$version" >"$src/build/version/version.txt"
	(cd "$src" && "$GO" build -buildvcs=false -o "$bin/ferretdb" ./cmd/ferretdb)
	rm -rf "$src"
	log "built $bin/ferretdb-embedded and $bin/ferretdb ($version) in $((SECONDS - start))s"
}

# alive PID NAME: whether PID is still a running process of binary NAME, so a
# stale pid file never makes us signal an unrelated process that reused it.
alive() {
	local comm
	comm=$(cat "/proc/$1/comm" 2>/dev/null) || return 1
	# The kernel keeps the first 15 bytes of a process name.
	[ "$comm" = "${2:0:15}" ]
}

stop_one() {
	local name=$1 pidfile=$run/$1.pid pid i
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	if [ -n "$pid" ] && alive "$pid" "$2"; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 100); do
			alive "$pid" "$2" || break
			sleep 0.1
		done
		if alive "$pid" "$2"; then
			log "$name (pid $pid) ignored SIGTERM for 10s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$pidfile"
}

stop() {
	stop_one noauth ferretdb-embedded
	stop_one auth ferretdb
	rm -rf "$run/data-noauth" "$run/data-auth" "$run/noauth.addr" "$env_file"
}

# wait_tcp NAME PID HOST PORT: waits up to 60s for HOST:PORT to accept TCP
# connections while PID lives.
wait_tcp() {
	local name=$1 pid=$2 host=$3 p=$4 i
	for i in $(seq 600); do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "$name exited during start-up; its log ($run/$name.log):"
			cat "$run/$name.log" >&2 || true
			return 1
		fi
		if (exec 3<>"/dev/tcp/$host/$p") 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	log "$name does not accept connections on $host:$p after 60s; its log ($run/$name.log):"
	cat "$run/$name.log" >&2 || true
	return 1
}

port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
	local b
	for b in ferretdb-embedded ferretdb; do
		if [ ! -x "$bin/$b" ]; then
			log "$bin/$b is missing; run make ferretdb-build (tools/ferretdb.sh build) first"
			return 1
		fi
	done
	stop
	mkdir -p "$run/data-noauth" "$run/data-auth"
	chmod 700 "$run"
	for b in "$port" "$auth_port"; do
		if ! port_free "$b"; then
			log "127.0.0.1:$b is already in use (set FERRETDB_PORT / FERRETDB_AUTH_PORT)"
			return 1
		fi
	done

	local t0=$SECONDS
	"$bin/ferretdb-embedded" -listen "127.0.0.1:$port" -dir "$run/data-noauth" \
		-ready-file "$run/noauth.addr" -log-level warn >"$run/noauth.log" 2>&1 </dev/null &
	echo $! >"$run/noauth.pid"

	# A fresh password per start, passed in the environment rather than on
	# the command line so ps never shows it.
	local pass
	pass=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	DO_NOT_TRACK=1 FERRETDB_SETUP_PASSWORD=$pass "$bin/ferretdb" \
		--handler=sqlite --sqlite-url="file:$run/data-auth/" \
		--listen-addr="127.0.0.1:$auth_port" --state-dir="$run/data-auth" \
		--debug-addr=- --telemetry=disable --log-level=WARN --log-format=text \
		--test-enable-new-auth --setup-database=admin --setup-username="$auth_user" \
		>"$run/auth.log" 2>&1 </dev/null &
	echo $! >"$run/auth.pid"

	if ! wait_tcp noauth "$(cat "$run/noauth.pid")" 127.0.0.1 "$port" ||
		! wait_tcp auth "$(cat "$run/auth.pid")" 127.0.0.1 "$auth_port"; then
		stop
		return 1
	fi

	umask 077
	{
		echo "MONGOSCOPE_FERRETDB_URI=mongodb://127.0.0.1:$port/"
		echo "MONGOSCOPE_FERRETDB_AUTH_URI=mongodb://$auth_user:$pass@127.0.0.1:$auth_port/?authSource=admin"
	} >"$env_file"
	log "started in $((SECONDS - t0))s; env file $env_file"
	echo "MONGOSCOPE_FERRETDB_URI=mongodb://127.0.0.1:$port/"
	echo "MONGOSCOPE_FERRETDB_AUTH_URI=mongodb://$auth_user:<password in $env_file>@127.0.0.1:$auth_port/?authSource=admin"
}

case ${1:-} in
build) build ;;
start) start ;;
stop) stop ;;
env) cat "$env_file" ;;
*)
	echo "usage: $0 build|start|stop|env" >&2
	exit 2
	;;
esac
