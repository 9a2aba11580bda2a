package mongotest_test

import (
	"fmt"
	"net"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
	"github.com/mongoscope/mongoscope/mongotest"
)

// A replica-set primary whose next insert fails with a retryable error;
// the test then reads what the server received. In a test, use NewServer,
// which closes the server when the test ends.
func Example() {
	s, err := mongotest.Start(mongotest.Options{
		Topology: mongotest.Topology{Role: mongotest.RolePrimary, SetName: "rs0"},
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	err = s.SetFailPoint(bson.D{
		{Key: "configureFailPoint", Value: "failCommand"},
		{Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 10107}}},
	})
	if err != nil {
		panic(err)
	}

	// Any driver connects to s.URI(); here, one raw OP_MSG ping.
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	ping, _ := bson.Marshal(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	if _, err := nc.Write(wire.AppendMsg(nil, 1, 0, 0, ping)); err != nil {
		panic(err)
	}
	buf, err := wire.ReadMessage(nc, 0)
	if err != nil {
		panic(err)
	}
	reply, _ := wire.ParseMsg(buf.B)
	fmt.Println("ok:", reply.Body.Lookup("ok").Double())
	buf.Release()

	for _, c := range s.Commands() {
		fmt.Println(c.ConnID, c.DB, c.Name)
	}
	// Output:
	// ok: 1
	// 1 admin ping
}
