package handshake_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
)

// A connection builds the client metadata once per client, appends the
// handshake command to its write buffer, and reads the reply.
func Example() {
	opts := handshake.Options{AppName: "billing", Compressors: []string{"zstd", "snappy"}, LoadBalanced: true}
	md, err := handshake.Metadata(opts)
	if err != nil {
		log.Fatal(err)
	}
	cmd, err := handshake.AppendHello(nil, md, opts, false, nil)
	if err != nil {
		log.Fatal(err)
	}
	var keys []string
	for it := bson.Raw(cmd).Iter(); it.Next(); {
		keys = append(keys, it.Key())
	}
	fmt.Println(strings.Join(keys, " "))

	// What a server behind a load balancer might answer.
	reply, _ := bson.Marshal(bson.D{
		{Key: "isWritablePrimary", Value: true},
		{Key: "msg", Value: "isdbgrid"},
		{Key: "maxWireVersion", Value: int32(25)},
		{Key: "compression", Value: bson.A{"snappy", "zstd"}},
		{Key: "serviceId", Value: bson.ObjectID{1}},
		{Key: "connectionId", Value: int64(17)},
		{Key: "ok", Value: 1.0},
	})
	r, err := handshake.ParseReply(reply)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.MsgIsDBGrid, r.MaxWireVersion, r.ConnectionID, r.ServiceID != nil, r.MaxMessageSizeBytes)
	fmt.Println(handshake.NegotiateCompressor(opts.Compressors, r.Compression))
	// Output:
	// hello helloOk backpressure client compression loadBalanced $db
	// true 25 17 true 48000000
	// zstd
}
