# mongoscope: one command runs every test (make test); make bench compares
# speed with the official Go driver.

GO        ?= go
SPECS     ?= $(if $(MONGODB_SPECS_DIR),$(MONGODB_SPECS_DIR),$(abspath ../shared/specifications))
# Short fuzz runs use an execution count, not a duration: Go 1.26's fuzz
# coordinator can report a spurious "context deadline exceeded" when a
# duration runs out (golang/go#75804, fixed in Go 1.27).
FUZZTIME  ?= 150000x
# Packages whose code runs concurrently; they run under the race detector.
RACE_PKGS ?= ./bson/... ./driver/... ./internal/... ./mongotest/... ./telemetry/... ./cmd/mongoprobe/...

export MONGODB_SPECS_DIR := $(SPECS)

.PHONY: all test fmt vet deps-check unit race fuzz-short bench tidy-check mongoprobe-run

all: test

test: fmt tidy-check vet deps-check unit race fuzz-short
	@echo "make test: all checks passed"

fmt:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	@echo "gofmt: ok"

# The driver imports no sink: tint, Prometheus's client and the OTel SDK
# belong to telemetry/ and cmd/, never to a library user's build of driver/.
SINK_DEPS ?= github.com/lmittmann/tint|github.com/prometheus/client_golang|go.opentelemetry.io/otel/sdk
deps-check:
	@deps=$$($(GO) list -deps ./driver/...) || exit 1; \
	  bad=$$(echo "$$deps" | grep -E '^($(SINK_DEPS))' | sort -u); \
	  if [ -n "$$bad" ]; then echo "./driver/... depends on sinks:"; echo "$$bad"; exit 1; fi; \
	  echo "deps-check: ./driver/... imports no sink"
	@imp=$$($(GO) list -f '{{.ImportPath}}: {{join .Imports " "}}' ./... | grep -E ' github.com/prometheus/client_golang' | cut -d: -f1 | grep -Ev '^github.com/mongoscope/mongoscope/(telemetry/metrics|cmd/.*)$$'); \
	  sdk=$$($(GO) list -f '{{.ImportPath}}: {{join .Imports " "}}' ./... | grep -E ' go.opentelemetry.io/otel/sdk' | cut -d: -f1 | grep -Ev '^github.com/mongoscope/mongoscope/cmd/'); \
	  if [ -n "$$imp$$sdk" ]; then echo "client_golang outside telemetry/metrics and cmd/, or the OTel SDK outside cmd/:"; echo "$$imp $$sdk"; exit 1; fi; \
	  echo "deps-check: client_golang is imported only by telemetry/metrics (and cmd/), the OTel SDK only by cmd/ and tests"
	@if grep -qE 'go.opentelemetry.io/otel/sdk|go.opentelemetry.io/otel/exporters|go.yaml.in/yaml/v3' go.mod; then \
	  echo "the library's go.mod requires the OTel SDK, an exporter or mongoprobe's YAML parser: they belong to cmd/mongoprobe/go.mod"; exit 1; fi
	@echo "deps-check: the library's go.mod requires no OTel SDK (mongoprobe's module does)"

# Every module's go.mod and go.sum are tidy: the tools and bench modules
# replace the root module, so a dependency added there changes them too.
MODULES ?= . cmd/mongoprobe bench tools/ferretdb tools/fidelity tools/officialrunner tools/stackcheck tools/dashgen tools/dashcheck
tidy-check:
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy -diff >/dev/null) || { echo "go.mod or go.sum of $$m is not tidy: run go mod tidy there"; exit 1; }; done
	@echo "tidy-check: every module is tidy"

vet:
	$(GO) vet ./... ./cmd/mongoprobe/...
	cd bench && $(GO) vet ./...

# The unit and spec tests, then the official driver against mongotest
# (tools/fidelity), with two FerretDB servers running for the interop tests (MONGOSCOPE_REQUIRE_FERRETDB makes them fail rather than
# skip if the servers are missing); the servers stop whatever happens. Then
# the compose stack's static checks (tools/stackcheck, see stack-check).
unit: ferretdb-build promtool
	@trap '$(FERRETDB) stop' EXIT; trap 'exit 130' INT TERM; $(FERRETDB) start && \
	  set -a && . $(FERRETDB_ENV) && set +a && \
	  MONGOSCOPE_REQUIRE_FERRETDB=1 $(GO) test -count=1 ./... ./cmd/mongoprobe/... && \
	  $(MAKE) --no-print-directory mongoprobe-run && \
	  (cd tools/ferretdb && $(GO) vet ./... && $(GO) test -count=1 ./...) && \
	  (cd tools/fidelity && $(GO) vet ./... && $(GO) test -count=1 ./...) && \
	  $(STACKCHECK) && $(DASHCHECK) && \
	  (cd bench && $(GO) test -count=1 ./...)

# The compose stack (docker-compose.yml, Dockerfile, deploy/), checked without
# a Docker engine: compose-go loads and validates the compose file, every
# mounted file must exist, promtool checks prometheus.yml, Grafana's
# provisioning must name existing paths, and the Dockerfile's go build line
# builds a mongoprobe that starts with the image's arguments. promtool is
# Debian's (tools/prometheus.sh install); MONGOSCOPE_REQUIRE_PROMTOOL makes
# its test fail rather than skip without it. The first run compiles mongoprobe
# once more (with -trimpath), hence the longer timeout.
STACKCHECK = (cd tools/stackcheck && $(GO) vet ./... && MONGOSCOPE_REQUIRE_PROMTOOL=1 $(GO) test -count=1 -timeout 20m ./...)
PROMETHEUS ?= tools/prometheus.sh

# The Grafana dashboards (dashboards/*.json), written by tools/dashgen:
# make dashboards rewrites them, and dashgen's test fails when the committed
# files are not its output. tools/dashcheck parses every query with
# Prometheus's PromQL parser, checks the dashboard linter's rules, and runs
# every query on a real Prometheus (Debian's, tools/prometheus.sh install)
# scraping a demo mongoprobe for up to 90 s; MONGOSCOPE_REQUIRE_PROMETHEUS
# makes that test fail rather than skip without the binary.
DASHCHECK = (cd tools/dashgen && $(GO) vet ./... && $(GO) test -count=1 ./...) && \
	  (cd tools/dashcheck && $(GO) vet ./... && MONGOSCOPE_REQUIRE_PROMETHEUS=1 $(GO) test -count=1 -timeout 10m ./...)

.PHONY: promtool stack-check drill dashboards dash-check

dashboards:
	cd tools/dashgen && $(GO) run .

dash-check: promtool
	$(DASHCHECK)

promtool:
	$(PROMETHEUS) install

stack-check: promtool
	$(STACKCHECK)

# The failover drill on a running compose stack (docker compose up -d): steps
# the replica set's primary down for 60 s, so the dashboards show a failover.
drill:
	deploy/drill.sh

# The README's first command, from the repository's root: mongoprobe's
# module builds through the root go.work and answers --help.
mongoprobe-run:
	@$(GO) run ./cmd/mongoprobe --help >/dev/null 2>&1 || { $(GO) run ./cmd/mongoprobe --help; exit 1; }
	@echo "mongoprobe-run: go run ./cmd/mongoprobe works from the root"

race:
	$(GO) test -count=1 -race $(RACE_PKGS)

# A short run of every fuzz target; the long runs are done by hand
# (FUZZTIME=5m make fuzz-short, or one target with go test -fuzz) and
# reported on the issue.
fuzz-short:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "fuzz $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg > /tmp/mongoscope-fuzz-$$t.log 2>&1 || { cat /tmp/mongoscope-fuzz-$$t.log; exit 1; }; \
	  done; \
	done

bench:
	cd bench && $(GO) run . $(BENCHFLAGS)

# FerretDB v1 over SQLite, a real third-party server for interop tests
# (tools/ferretdb/README.md). ferretdb-start writes MONGOSCOPE_FERRETDB_URI
# and MONGOSCOPE_FERRETDB_AUTH_URI to $(FERRETDB_ENV); ferretdb-smoke checks
# the servers with the tools module's own tests and stops them, pass or fail.
FERRETDB     ?= tools/ferretdb.sh
FERRETDB_ENV ?= $(CURDIR)/.cache/ferretdb/env

.PHONY: ferretdb-build ferretdb-start ferretdb-stop ferretdb-smoke

ferretdb-build:
	GO=$(GO) $(FERRETDB) build

ferretdb-start:
	$(FERRETDB) start

ferretdb-stop:
	$(FERRETDB) stop

ferretdb-smoke: ferretdb-build
	@trap '$(FERRETDB) stop' EXIT; trap 'exit 130' INT TERM; $(FERRETDB) start >/dev/null && \
	  set -a && . $(FERRETDB_ENV) && set +a && \
	  (cd tools/ferretdb && $(GO) vet ./... && $(GO) test -count=1 ./...)
