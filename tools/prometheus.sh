#!/usr/bin/env bash
# Installs promtool, with which `make test` checks the compose stack's
# Prometheus configuration (tools/stackcheck), and the prometheus server, on
# which tools/dashcheck runs the dashboards' queries. Both come with Debian's
# prometheus package.
#
#   tools/prometheus.sh install   install the package when promtool or prometheus is missing
#   tools/prometheus.sh version   print promtool's and prometheus's versions
#
# Installing the package may start a Prometheus server (its init script, or
# systemd's unit). Later tests start Prometheus servers of their own, so the
# install is made with a policy-rc.d that forbids starting services, and any
# prometheus process that appears during the install is stopped, by its pid,
# and the unit disabled where systemd runs.
set -euo pipefail

log() { echo "prometheus.sh: $*" >&2; }

# pids NAME: the pids of running processes whose name is NAME.
pids() {
	local d comm
	for d in /proc/[0-9]*; do
		comm=$(cat "$d/comm" 2>/dev/null) || continue
		[ "$comm" = "$1" ] && echo "${d#/proc/}"
	done
	return 0
}

install() {
	if command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1; then
		log "promtool and prometheus are installed: $(promtool --version 2>&1 | head -n 1)"
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		log "promtool or prometheus is missing and this is not root: install Debian's prometheus package (apt-get install prometheus)"
		return 1
	fi
	local before policy=/usr/sbin/policy-rc.d made_policy=0 t0=$SECONDS
	before=" $(pids prometheus | tr '\n' ' ') "
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\n# tools/prometheus.sh: no service starts while it installs prometheus\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		made_policy=1
	fi
	local rc=0 out=${TMPDIR:-/tmp}/mongoscope-prometheus-install.log
	log "promtool or prometheus is missing: installing Debian's prometheus package (log: $out)"
	{
		DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus
	} >"$out" 2>&1 || rc=$?
	[ "$made_policy" = 1 ] && rm -f "$policy"

	# Whatever the install started anyway is stopped.
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
	local pid i
	for pid in $(pids prometheus); do
		case $before in *" $pid "*) continue ;; esac
		log "stopping prometheus (pid $pid), started by the package's install"
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 50); do
			[ -e "/proc/$pid" ] || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	done

	if [ "$rc" != 0 ]; then
		cat "$out" >&2
		log "apt-get install prometheus failed (exit $rc)"
		return "$rc"
	fi
	if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
		log "the prometheus package is installed but promtool or prometheus is not on PATH"
		return 1
	fi
	log "installed $(promtool --version 2>&1 | head -n 1) in $((SECONDS - t0))s"
}

case ${1:-} in
install) install ;;
version) promtool --version && prometheus --version ;;
*)
	echo "usage: $0 install|version" >&2
	exit 2
	;;
esac
