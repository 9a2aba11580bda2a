package description_test

import (
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// A client seeded with one member of a replica set hears from the primary:
// the topology learns the other members and records the primary.
func Example() {
	td, err := description.New(description.Settings{Seeds: []string{"db1.example.com"}, SetName: "rs0"})
	if err != nil {
		panic(err)
	}
	hello := &handshake.Reply{
		IsWritablePrimary: true,
		SetName:           "rs0",
		Hosts:             []string{"db1.example.com:27017", "db2.example.com:27017"},
		MaxWireVersion:    21,
	}
	var rtt description.RTT
	rtt.Add(2 * time.Millisecond)
	avg, _ := rtt.Average()
	sd := description.NewServer("db1.example.com:27017", hello, avg, time.Now())

	td, changes := td.Apply(sd)
	fmt.Println(td.Type, changes.Added)
	for _, s := range td.Servers {
		fmt.Println(s.Address, s.Type)
	}

	// A "not writable primary" error from an operation: mark the server
	// Unknown and ask its monitor for a check; the pool is kept.
	out := description.HandleError(sd, description.ErrorInfo{Err: fmt.Errorf("not primary"), Code: 10107, MaxWireVersion: 21})
	td, _ = td.Apply(out.Server)
	fmt.Println(td.Type, out.ClearPool, out.RequestCheck)
	// Output:
	// ReplicaSetWithPrimary [db2.example.com:27017]
	// db1.example.com:27017 RSPrimary
	// db2.example.com:27017 Unknown
	// ReplicaSetNoPrimary false true
}
