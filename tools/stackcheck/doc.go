// Package stackcheck checks the compose stack (docker-compose.yml, the
// Dockerfile and the files under deploy/ and dashboards/) without a Docker
// engine, which this project's machines do not have: the compose file is
// loaded and validated by compose-go, every file the stack mounts must exist
// in the repository, promtool checks Prometheus's configuration, Grafana's
// provisioning must parse and name existing paths, and the Dockerfile's own
// `go build` line builds a mongoprobe that starts with the image's arguments.
//
// It is a module of its own (like tools/fidelity), so that compose-go never
// enters the library's or mongoprobe's dependencies. `make test` runs it with
// MONGOSCOPE_REQUIRE_PROMTOOL=1, after tools/prometheus.sh install.
package stackcheck
