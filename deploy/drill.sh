#!/usr/bin/env bash
# The failover drill of the compose stack (make drill): finds the replica
# set's primary and steps it down for 60 s, so that an election follows and
# mongoprobe's dashboards show the failover (primary changes, the time without
# a writable primary, the probes that failed or were retried meanwhile).
#
#   deploy/drill.sh            step the current primary down (60 s)
#   STEPDOWN_SECS=120 deploy/drill.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${STEPDOWN_SECS:-60}
compose=${COMPOSE:-docker compose}

# The primary as rs0 sees it, asked of any member that answers.
primary=
for m in mongo1 mongo2 mongo3; do
	primary=$($compose exec -T "$m" mongosh --quiet --eval 'rs.isMaster().primary || ""' 2>/dev/null | tr -d '\r') || continue
	[ -n "$primary" ] && break
done
if [ -z "$primary" ]; then
	echo "drill: no member names a primary; is the stack up (docker compose up -d)?" >&2
	exit 1
fi
service=${primary%%:*}
case $service in
mongo1 | mongo2 | mongo3) ;;
*)
	echo "drill: the primary $primary is not a service of the stack" >&2
	exit 1
	;;
esac

echo "drill: stepping down $primary for ${secs}s at $(date -u +%H:%M:%SZ)"
# The primary closes its connections as it steps down, so mongosh may report
# a network error even though the step-down happened: check afterwards.
$compose exec -T "$service" mongosh --quiet --eval "db.adminCommand({replSetStepDown: $secs})" || true
for i in $(seq 30); do
	sleep 1
	now=$($compose exec -T "$service" mongosh --quiet --eval 'rs.isMaster().primary || ""' 2>/dev/null | tr -d '\r') || continue
	if [ -n "$now" ] && [ "$now" != "$primary" ]; then
		echo "drill: new primary $now after ${i}s; see Grafana (http://127.0.0.1:3000) and Prometheus (http://127.0.0.1:9090)"
		exit 0
	fi
done
echo "drill: no new primary 30s after the step-down of $primary" >&2
exit 1
