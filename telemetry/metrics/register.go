package metrics

import "github.com/prometheus/client_golang/prometheus"

// Registerer is Prometheus's registerer, named here so that package
// telemetry, and users who only wire the sinks together, need not import
// client_golang themselves: telemetry/metrics is the one package of the
// module that does.
type Registerer = prometheus.Registerer

// Register registers m on r, or on prometheus.DefaultRegisterer when r is
// nil.
func (m *Metrics) Register(r Registerer) error {
	if r == nil {
		r = prometheus.DefaultRegisterer
	}
	return r.Register(m)
}
