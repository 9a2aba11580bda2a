package driver

import "github.com/mongoscope/mongoscope/driver/internal/handshake"

// DriverName is the driver's name as the handshake sends it
// (client.driver.name). Instrumentation outside the driver, such as the
// OpenTelemetry tracer of package telemetry/tracing, names itself with it.
const DriverName = handshake.DriverName

// DriverVersion returns the driver's version as the handshake sends it
// (client.driver.version). It is a function, not a constant, because a
// release build may set it with -ldflags -X on the handshake package.
func DriverVersion() string { return handshake.Version }
