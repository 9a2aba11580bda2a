package app

import (
	"encoding/json"
	"net/http"
	"sort"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
)

// failoversHandler serves /api/failovers: the failovers every cluster
// keeps (the last probe.FailoverHistory closed ones and the open one), as
// JSON, {"failovers": [...]}, ordered by detection time; ?cluster=<name>
// keeps one configured cluster's (any other name is refused, 400).
func failoversHandler(byName map[string]*probe.Cluster) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		clusters := byName
		if name := r.URL.Query().Get("cluster"); name != "" {
			c, ok := byName[name]
			if !ok {
				http.Error(w, "unknown cluster "+shortQuote(name)+": the cluster must be the name of a configured cluster", http.StatusBadRequest)
				return
			}
			clusters = map[string]*probe.Cluster{name: c}
		}
		fs := []probe.Failover{}
		for _, c := range clusters {
			fs = append(fs, c.Failovers()...)
		}
		sort.SliceStable(fs, func(i, j int) bool {
			if !fs[i].Detected.Equal(fs[j].Detected) {
				return fs[i].Detected.Before(fs[j].Detected)
			}
			return fs[i].Cluster < fs[j].Cluster
		})
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(struct {
			Failovers []probe.Failover `json:"failovers"`
		}{fs})
	}
}
