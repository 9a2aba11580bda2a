// Package metrics is the driver's Prometheus sink: a prometheus.Collector
// fed by the driver's events (package driver/event). It is the only package
// of the module that imports client_golang; the driver never imports it.
package metrics

import "github.com/prometheus/client_golang/prometheus"

// Options configure Metrics.
type Options struct {
	// Buckets are the duration histograms' bucket bounds in seconds; nil
	// means OpenTelemetry's bucket bounds for database client durations.
	Buckets []float64
}

// Metrics is a prometheus.Collector of the driver's metrics. Give it to a
// client in driver.ClientOptions.Monitors and register it.
type Metrics struct{}

// New returns Metrics for o.
func New(o Options) *Metrics { return &Metrics{} }

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {}
