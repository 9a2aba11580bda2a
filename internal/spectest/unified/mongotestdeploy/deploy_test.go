package mongotestdeploy

import (
	"errors"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/driver"
)

func TestStart(t *testing.T) {
	multi, single := true, false
	tests := []struct {
		topology            string
		auth                bool
		internal, all, one  string // substrings of the URIs
		internalHosts, nAll int
	}{
		{topology: "single", internal: "mongodb://127.0.0.1:", internalHosts: 1, nAll: 1},
		{topology: "single", auth: true, internal: "mongodb://" + User + ":" + Password + "@", all: "authSource=admin", internalHosts: 1, nAll: 1},
		{topology: "replicaset", all: "replicaSet=rs0", internalHosts: 1, nAll: 3},
		{topology: "sharded", internalHosts: 1, nAll: 2},
		{topology: "load-balanced", all: "loadBalanced=true", internalHosts: 1, nAll: 1},
	}
	for _, tt := range tests {
		t.Run(tt.topology, func(t *testing.T) {
			d, err := Provider{}.Start(tt.topology, tt.auth)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Topology() != tt.topology {
				t.Errorf("Topology() = %q", d.Topology())
			}
			hosts := func(uri string) int {
				rest := strings.SplitN(uri, "://", 2)[1]
				h := strings.SplitN(rest, "/", 2)[0]
				return len(strings.Split(h, ","))
			}
			if n := hosts(d.InternalURI()); n != tt.internalHosts {
				t.Errorf("InternalURI %s has %d hosts, want %d", d.InternalURI(), n, tt.internalHosts)
			}
			if n := hosts(d.ClientURI(&multi)); n != tt.nAll {
				t.Errorf("ClientURI(true) %s has %d hosts, want %d", d.ClientURI(&multi), n, tt.nAll)
			}
			if tt.topology == "sharded" && hosts(d.ClientURI(&single)) != 1 {
				t.Errorf("ClientURI(false) %s must name one mongos", d.ClientURI(&single))
			}
			if !strings.Contains(d.InternalURI(), tt.internal) || !strings.Contains(d.ClientURI(nil), tt.all) {
				t.Errorf("URIs %s and %s lack %q / %q", d.InternalURI(), d.ClientURI(nil), tt.internal, tt.all)
			}
		})
	}
	if _, err := (Provider{}).Start("sharded-replicaset", false); err == nil {
		t.Error("an unknown topology must be refused")
	}
}

func TestGap(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&driver.OperationError{Err: &driver.CommandError{Code: 238, Message: "no $where"}}, true},
		{&driver.OperationError{Err: &driver.WriteException{WriteErrors: []driver.WriteError{{Code: 238, Message: "no $setField"}}}}, true},
		{&driver.OperationError{Err: &driver.BulkWriteException{WriteErrors: []driver.WriteError{{Code: 11000}, {Code: 238}}}}, true},
		{&driver.OperationError{Err: &driver.CommandError{Code: 59}}, false},
		{errors.New("x"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := (Provider{}).Gap(tt.err) != ""; got != tt.want {
			t.Errorf("Gap(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
