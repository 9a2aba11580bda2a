#!/usr/bin/env bash
# Runs the official Go driver's unified test runner
# (go.mongodb.org/mongo-driver/v2/internal/integration/unified) against a
# mongotest deployment and prints pass/fail/skip counts per suite. See
# README.md. Usage: tools/officialrunner/run.sh [suite...]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
GO=${GO:-go}
DRIVER_VERSION=${DRIVER_VERSION:-v2.10.0}
SPECS=${MONGODB_SPECS_DIR:-$(cd "$here/../../.." && pwd)/shared/specifications}
SCRATCH=${OFFICIALRUNNER_DIR:-${TMPDIR:-/tmp}/mongoscope-officialrunner}
TOPOLOGY=${TOPOLOGY:-replicaset}
MEMBERS=${MEMBERS:-3}
LOGS=${LOGS:-$SCRATCH/logs}

# suite name -> directories of the specifications repository the runner
# knows (its passDirectories).
suite_dirs() {
	case $1 in
	crud) echo "crud/tests/unified" ;;
	collection-management) echo "collection-management/tests" ;;
	index-management) echo "index-management/tests" ;;
	command-logging-and-monitoring) echo "command-logging-and-monitoring/tests/monitoring command-logging-and-monitoring/tests/logging" ;;
	*) echo "$1" ;; # any other passDirectories entry, as written there
	esac
}

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	suites=(crud collection-management index-management command-logging-and-monitoring)
fi
[ -d "$SPECS" ] || { echo "run.sh: specifications not found at $SPECS (set MONGODB_SPECS_DIR)" >&2; exit 2; }

# A writable copy of the driver module, with the layout its spectest
# package expects: $PROJECT_DIRECTORY/testdata/specifications/source.
driver="$SCRATCH/driver-$DRIVER_VERSION"
if [ ! -d "$driver/internal/integration/unified" ]; then
	src=$(cd "$here" && GOFLAGS=-mod=mod "$GO" mod download -json "go.mongodb.org/mongo-driver/v2@$DRIVER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -n "$src" ] || { echo "run.sh: cannot find the driver module $DRIVER_VERSION" >&2; exit 2; }
	mkdir -p "$SCRATCH"
	rm -rf "$driver.tmp"
	cp -r "$src" "$driver.tmp"
	chmod -R u+w "$driver.tmp"
	mv "$driver.tmp" "$driver"
fi
mkdir -p "$driver/testdata/specifications" "$LOGS"
ln -sfn "$SPECS" "$driver/testdata/specifications/source"

(cd "$here" && "$GO" build -o "$SCRATCH/launcher" .)

pid=
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap stop EXIT

status=0
for suite in "${suites[@]}"; do
	log="$LOGS/${suite//\//_}.log"
	: >"$log"
	for dir in $(suite_dirs "$suite"); do
		# A fresh deployment per directory: no state left from the last.
		: >"$SCRATCH/uri"
		"$SCRATCH/launcher" -topology "$TOPOLOGY" -n "$MEMBERS" >"$SCRATCH/uri" 2>>"$log" &
		pid=$!
		for _ in $(seq 100); do [ -s "$SCRATCH/uri" ] && break; sleep 0.05; done
		sleep 0.1 # the launcher prints all its lines at once; let them land
		uri=$(head -1 "$SCRATCH/uri")
		[ -n "$uri" ] || { echo "run.sh: the launcher printed no URI" >&2; exit 2; }
		# Further lines are NAME=URI for the runner (load balancers).
		extra=()
		while IFS= read -r line; do extra+=("$line"); done < <(tail -n +2 "$SCRATCH/uri")
		(cd "$driver" && env "${extra[@]}" GOWORK=off PROJECT_DIRECTORY="$driver" MONGODB_URI="$uri" \
			"$GO" test -count=1 -v -timeout 20m -run "^TestUnifiedSpec\$/^${dir//\//\$/^}\$" \
			./internal/integration/unified) >>"$log" 2>&1 || status=1
		stop
	done
	# Leaf results: one test case of one JSON file.
	pass=$(grep -cE -- '--- PASS: .*\.json/' "$log" || true)
	fail=$(grep -cE -- '--- FAIL: .*\.json/' "$log" || true)
	skip=$(grep -cE -- '--- SKIP: .*\.json/' "$log" || true)
	echo "$suite: $pass passed, $fail failed, $skip skipped (log: $log)"
done
# The failures with the runner's first message for each.
for suite in "${suites[@]}"; do
	awk -v suite="$suite" '
		/^=== RUN/ { name = $3; msg[name] = ""; next }
		/^ *--- FAIL: .*\.json\// { n = $3; sub(/.*\/tests\/(unified\/|monitoring\/|logging\/)?/, "", n); print suite ": FAIL " n ": " msg[$3]; next }
		/^ +[a-z_]+\.go:[0-9]+: / && name != "" && msg[name] == "" { m = $0; sub(/^ +/, "", m); msg[name] = substr(m, 1, 300) }
	' "$LOGS/${suite//\//_}.log"
done >"$LOGS/failures.txt"
echo "failures: $LOGS/failures.txt"
exit $status
