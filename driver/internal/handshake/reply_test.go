package handshake

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

var (
	testOID  = bson.ObjectID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	testOID2 = bson.ObjectID{0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0, 1, 2, 3, 4, 5}
)

func ptr[T any](v T) *T { return &v }

func TestParseReplyFull(t *testing.T) {
	lastWrite := time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)
	doc := marshal(t, bson.D{
		{Key: "isWritablePrimary", Value: true},
		{Key: "helloOk", Value: true},
		{Key: "topologyVersion", Value: bson.D{{Key: "processId", Value: testOID}, {Key: "counter", Value: int64(7)}}},
		{Key: "hosts", Value: bson.A{"a:27017", "b:27017"}},
		{Key: "passives", Value: bson.A{"p:27017"}},
		{Key: "arbiters", Value: bson.A{"arb:27017"}},
		{Key: "setName", Value: "rs0"},
		{Key: "setVersion", Value: int32(3)},
		{Key: "electionId", Value: testOID2},
		{Key: "primary", Value: "a:27017"},
		{Key: "me", Value: "a:27017"},
		{Key: "secondary", Value: false},
		{Key: "arbiterOnly", Value: false},
		{Key: "hidden", Value: false},
		{Key: "tags", Value: bson.D{{Key: "dc", Value: "east"}, {Key: "rack", Value: "1"}}},
		{Key: "lastWrite", Value: bson.D{{Key: "opTime", Value: bson.D{{Key: "t", Value: int64(1)}}}, {Key: "lastWriteDate", Value: bson.NewDateTimeFromTime(lastWrite)}}},
		{Key: "maxBsonObjectSize", Value: int32(16777216)},
		{Key: "maxMessageSizeBytes", Value: int32(48000000)},
		{Key: "maxWriteBatchSize", Value: int32(100000)},
		{Key: "localTime", Value: bson.NewDateTimeFromTime(lastWrite)},
		{Key: "logicalSessionTimeoutMinutes", Value: int32(30)},
		{Key: "connectionId", Value: int32(42)},
		{Key: "minWireVersion", Value: int32(0)},
		{Key: "maxWireVersion", Value: int32(25)},
		{Key: "readOnly", Value: false},
		{Key: "compression", Value: bson.A{"zstd"}},
		{Key: "saslSupportedMechs", Value: bson.A{"SCRAM-SHA-256", "SOME-FUTURE-MECH"}},
		{Key: "speculativeAuthenticate", Value: bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "done", Value: false}}},
		{Key: "serviceId", Value: testOID},
		{Key: "iscryptd", Value: true},
		{Key: "ok", Value: 1.0},
	})
	got, err := ParseReply(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := Reply{
		IsWritablePrimary: true, HelloOK: true, IsCryptd: true,
		SetName: "rs0", SetVersion: ptr(int64(3)), ElectionID: ptr(testOID2), Primary: "a:27017", Me: "a:27017",
		Hosts: []string{"a:27017", "b:27017"}, Passives: []string{"p:27017"}, Arbiters: []string{"arb:27017"},
		Tags:           map[string]string{"dc": "east", "rack": "1"},
		MinWireVersion: 0, MaxWireVersion: 25,
		MaxBSONObjectSize: 16777216, MaxMessageSizeBytes: 48000000, MaxWriteBatchSize: 100000,
		LogicalSessionTimeoutMinutes: ptr(int64(30)),
		Compression:                  []string{"zstd"},
		SaslSupportedMechs:           []string{"SCRAM-SHA-256", "SOME-FUTURE-MECH"},
		SpeculativeAuthenticate:      marshal(t, bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "done", Value: false}}),
		ConnectionID:                 42,
		ServiceID:                    ptr(testOID),
		TopologyVersion:              &TopologyVersion{ProcessID: testOID, Counter: 7},
		LastWriteDate:                lastWrite,
		Raw:                          doc,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseReply\n got %+v\nwant %+v", got, want)
	}

	// Raw and SpeculativeAuthenticate are a copy: the caller may reuse its buffer.
	for i := range doc {
		doc[i] = 0
	}
	if got.Raw.Validate() != nil || got.SpeculativeAuthenticate.Lookup("conversationId").Int32() != 1 {
		t.Fatal("reply still views the caller's buffer")
	}
}

func TestParseReplyFields(t *testing.T) {
	defaults := func(r Reply) Reply {
		if r.MaxBSONObjectSize == 0 {
			r.MaxBSONObjectSize = DefaultMaxBSONObjectSize
		}
		if r.MaxMessageSizeBytes == 0 {
			r.MaxMessageSizeBytes = DefaultMaxMessageSizeBytes
		}
		if r.MaxWriteBatchSize == 0 {
			r.MaxWriteBatchSize = DefaultMaxWriteBatchSize
		}
		return r
	}
	tests := []struct {
		name string
		doc  bson.D
		want Reply // size limits left zero mean the defaults
	}{
		{"empty reply: defaults", bson.D{}, Reply{}},
		{"connectionId int32", bson.D{{Key: "connectionId", Value: int32(7)}}, Reply{ConnectionID: 7}},
		{"connectionId int64", bson.D{{Key: "connectionId", Value: int64(1) << 40}}, Reply{ConnectionID: 1 << 40}},
		{"connectionId double", bson.D{{Key: "connectionId", Value: 12345.0}}, Reply{ConnectionID: 12345}},
		{"legacy ismaster", bson.D{{Key: "ismaster", Value: true}}, Reply{IsWritablePrimary: true}},
		{"isWritablePrimary wins over ismaster", bson.D{{Key: "isWritablePrimary", Value: false}, {Key: "ismaster", Value: true}}, Reply{}},
		{"isWritablePrimary wins when second", bson.D{{Key: "ismaster", Value: true}, {Key: "isWritablePrimary", Value: false}}, Reply{}},
		{"mongos", bson.D{{Key: "msg", Value: "isdbgrid"}}, Reply{MsgIsDBGrid: true}},
		{"other msg", bson.D{{Key: "msg", Value: "hello"}}, Reply{}},
		{"RSGhost", bson.D{{Key: "isreplicaset", Value: true}}, Reply{IsReplicaSet: true}},
		{"arbiter", bson.D{{Key: "arbiterOnly", Value: true}, {Key: "secondary", Value: false}}, Reply{ArbiterOnly: true}},
		{"hidden secondary", bson.D{{Key: "secondary", Value: true}, {Key: "hidden", Value: true}}, Reply{Secondary: true, Hidden: true}},
		{"limits as int64 and double", bson.D{{Key: "maxBsonObjectSize", Value: int64(1024)}, {Key: "maxMessageSizeBytes", Value: 2048.0}, {Key: "maxWriteBatchSize", Value: int32(10)}}, Reply{MaxBSONObjectSize: 1024, MaxMessageSizeBytes: 2048, MaxWriteBatchSize: 10}},
		{"wire versions as int64", bson.D{{Key: "minWireVersion", Value: int64(6)}, {Key: "maxWireVersion", Value: int64(21)}}, Reply{MinWireVersion: 6, MaxWireVersion: 21}},
		{"setVersion int64 and electionId", bson.D{{Key: "setVersion", Value: int64(1) << 33}, {Key: "electionId", Value: testOID}}, Reply{SetVersion: ptr(int64(1) << 33), ElectionID: ptr(testOID)}},
		{"null fields are absent", bson.D{{Key: "logicalSessionTimeoutMinutes", Value: nil}, {Key: "setName", Value: nil}, {Key: "electionId", Value: nil}, {Key: "maxBsonObjectSize", Value: nil}}, Reply{}},
		{"logicalSessionTimeoutMinutes 0 is set", bson.D{{Key: "logicalSessionTimeoutMinutes", Value: int32(0)}}, Reply{LogicalSessionTimeoutMinutes: ptr(int64(0))}},
		{"topologyVersion int32 counter", bson.D{{Key: "topologyVersion", Value: bson.D{{Key: "counter", Value: int32(2)}, {Key: "processId", Value: testOID}}}}, Reply{TopologyVersion: &TopologyVersion{ProcessID: testOID, Counter: 2}}},
		{"lastWrite without date", bson.D{{Key: "lastWrite", Value: bson.D{{Key: "opTime", Value: int32(1)}}}}, Reply{}},
		{"empty arrays", bson.D{{Key: "hosts", Value: bson.A{}}, {Key: "tags", Value: bson.D{}}}, Reply{Tags: map[string]string{}}},
		{"arbitrary mechanism (handshake prose Test 2)", bson.D{{Key: "saslSupportedMechs", Value: bson.A{"ARBITRARY-MECH", ""}}}, Reply{SaslSupportedMechs: []string{"ARBITRARY-MECH", ""}}},
		{"unknown fields ignored", bson.D{{Key: "$clusterTime", Value: bson.D{{Key: "x", Value: int32(1)}}}, {Key: "isWritablePrimaryX", Value: "no"}, {Key: "ok", Value: 1.0}}, Reply{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := marshal(t, tc.doc)
			got, err := ParseReply(doc)
			if err != nil {
				t.Fatal(err)
			}
			want := defaults(tc.want)
			want.Raw = doc
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ParseReply\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseReplyErrors(t *testing.T) {
	tests := []struct {
		name  string
		doc   bson.D
		field string
	}{
		{"isWritablePrimary as int", bson.D{{Key: "isWritablePrimary", Value: int32(1)}}, "isWritablePrimary"},
		{"ismaster as string", bson.D{{Key: "ismaster", Value: "true"}}, "ismaster"},
		{"helloOk as int", bson.D{{Key: "helloOk", Value: int32(1)}}, "helloOk"},
		{"msg as int", bson.D{{Key: "msg", Value: int32(1)}}, "msg"},
		{"secondary", bson.D{{Key: "secondary", Value: "yes"}}, "secondary"},
		{"arbiterOnly", bson.D{{Key: "arbiterOnly", Value: 1.0}}, "arbiterOnly"},
		{"hidden", bson.D{{Key: "hidden", Value: int64(1)}}, "hidden"},
		{"isreplicaset", bson.D{{Key: "isreplicaset", Value: bson.D{}}}, "isreplicaset"},
		{"iscryptd", bson.D{{Key: "iscryptd", Value: "x"}}, "iscryptd"},
		{"setName", bson.D{{Key: "setName", Value: int32(0)}}, "setName"},
		{"setVersion as string", bson.D{{Key: "setVersion", Value: "1"}}, "setVersion"},
		{"setVersion fractional", bson.D{{Key: "setVersion", Value: 1.5}}, "setVersion"},
		{"electionId as string", bson.D{{Key: "electionId", Value: "000000000000000000000001"}}, "electionId"},
		{"primary", bson.D{{Key: "primary", Value: bson.A{}}}, "primary"},
		{"me", bson.D{{Key: "me", Value: true}}, "me"},
		{"hosts as string", bson.D{{Key: "hosts", Value: "a:1"}}, "hosts"},
		{"hosts element", bson.D{{Key: "hosts", Value: bson.A{"a:1", int32(2)}}}, "hosts.1"},
		{"passives element", bson.D{{Key: "passives", Value: bson.A{nil}}}, "passives.0"},
		{"arbiters", bson.D{{Key: "arbiters", Value: bson.D{}}}, "arbiters"},
		{"tags as array", bson.D{{Key: "tags", Value: bson.A{}}}, "tags"},
		{"tag value", bson.D{{Key: "tags", Value: bson.D{{Key: "dc", Value: int32(1)}}}}, "tags.dc"},
		{"minWireVersion as string", bson.D{{Key: "minWireVersion", Value: "0"}}, "minWireVersion"},
		{"maxWireVersion overflow", bson.D{{Key: "maxWireVersion", Value: int64(math.MaxInt32) + 1}}, "maxWireVersion"},
		{"maxBsonObjectSize zero", bson.D{{Key: "maxBsonObjectSize", Value: int32(0)}}, "maxBsonObjectSize"},
		{"maxMessageSizeBytes negative", bson.D{{Key: "maxMessageSizeBytes", Value: int32(-1)}}, "maxMessageSizeBytes"},
		{"maxWriteBatchSize as bool", bson.D{{Key: "maxWriteBatchSize", Value: true}}, "maxWriteBatchSize"},
		{"logicalSessionTimeoutMinutes NaN", bson.D{{Key: "logicalSessionTimeoutMinutes", Value: math.NaN()}}, "logicalSessionTimeoutMinutes"},
		{"compression element", bson.D{{Key: "compression", Value: bson.A{true}}}, "compression.0"},
		{"saslSupportedMechs as string", bson.D{{Key: "saslSupportedMechs", Value: "SCRAM-SHA-1"}}, "saslSupportedMechs"},
		{"speculativeAuthenticate as array", bson.D{{Key: "speculativeAuthenticate", Value: bson.A{}}}, "speculativeAuthenticate"},
		{"connectionId as string", bson.D{{Key: "connectionId", Value: "7"}}, "connectionId"},
		{"connectionId infinite", bson.D{{Key: "connectionId", Value: math.Inf(1)}}, "connectionId"},
		{"connectionId too large a double", bson.D{{Key: "connectionId", Value: 1e19}}, "connectionId"},
		{"serviceId as binary", bson.D{{Key: "serviceId", Value: bson.Binary{Data: []byte("x")}}}, "serviceId"},
		{"topologyVersion as int", bson.D{{Key: "topologyVersion", Value: int32(1)}}, "topologyVersion"},
		{"topologyVersion without processId", bson.D{{Key: "topologyVersion", Value: bson.D{{Key: "counter", Value: int64(1)}}}}, "topologyVersion.processId"},
		{"topologyVersion processId type", bson.D{{Key: "topologyVersion", Value: bson.D{{Key: "processId", Value: "x"}, {Key: "counter", Value: int64(1)}}}}, "topologyVersion.processId"},
		{"topologyVersion without counter", bson.D{{Key: "topologyVersion", Value: bson.D{{Key: "processId", Value: testOID}}}}, "topologyVersion.counter"},
		{"topologyVersion counter type", bson.D{{Key: "topologyVersion", Value: bson.D{{Key: "processId", Value: testOID}, {Key: "counter", Value: "1"}}}}, "topologyVersion.counter"},
		{"lastWrite as date", bson.D{{Key: "lastWrite", Value: bson.DateTime(1)}}, "lastWrite"},
		{"lastWriteDate as int64", bson.D{{Key: "lastWrite", Value: bson.D{{Key: "lastWriteDate", Value: int64(1)}}}}, "lastWrite.lastWriteDate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseReply(marshal(t, tc.doc))
			var he *Error
			if !errors.As(err, &he) || he.Field != tc.field {
				t.Fatalf("error %v, want *Error for %q", err, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("message %q does not name %q", err, tc.field)
			}
		})
	}
}

func TestParseReplyInvalidBSON(t *testing.T) {
	good := marshal(t, bson.D{{Key: "ok", Value: 1.0}})
	for _, doc := range []bson.Raw{nil, {}, {5, 0, 0, 0}, good[:len(good)-1], append(append([]byte{}, good...), 0)} {
		_, err := ParseReply(doc)
		var he *Error
		if !errors.As(err, &he) {
			t.Fatalf("ParseReply(%x): %v, want *Error", []byte(doc), err)
		}
		var de *bson.DecodeError
		if len(doc) > 0 && !errors.As(err, &de) {
			t.Fatalf("ParseReply(%x): %v does not wrap the decode error", []byte(doc), err)
		}
	}
}

// TestParseReplySDAMResponses parses every hello and legacy hello response
// in the SDAM specification tests and checks the fields against a plain
// JSON reading of the same response.
func TestParseReplySDAMResponses(t *testing.T) {
	var files []string
	for _, dir := range []string{"single", "rs", "sharded", "load-balanced", "monitoring", "errors"} {
		files = append(files, spectest.Files(t, "*.json", "server-discovery-and-monitoring", "tests", dir)...)
	}
	parsed := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var file struct {
			Phases []struct {
				Responses []json.RawMessage `json:"responses"`
			} `json:"phases"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, phase := range file.Phases {
			for _, resp := range phase.Responses {
				var pair []json.RawMessage
				if err := json.Unmarshal(resp, &pair); err != nil || len(pair) != 2 {
					t.Fatalf("%s: response %s is not [address, reply]", path, resp)
				}
				doc, err := bson.ParseExtJSON(pair[1])
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				r, err := ParseReply(doc)
				if err != nil {
					t.Fatalf("%s: ParseReply(%s): %v", path, pair[1], err)
				}
				checkAgainstJSON(t, path, pair[1], r)
				parsed++
			}
		}
	}
	t.Logf("server-discovery-and-monitoring responses: %d passed, 0 skipped (%d files)", parsed, len(files))
}

func checkAgainstJSON(t *testing.T, path string, js json.RawMessage, r Reply) {
	t.Helper()
	var m struct {
		IsWritablePrimary *bool    `json:"isWritablePrimary"`
		IsMaster          *bool    `json:"ismaster"`
		Secondary         bool     `json:"secondary"`
		SetName           string   `json:"setName"`
		Hosts             []string `json:"hosts"`
		Me                string   `json:"me"`
		MaxWireVersion    int32    `json:"maxWireVersion"`
		Msg               string   `json:"msg"`
		SetVersion        *int64   `json:"setVersion"`
	}
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	primary := false
	switch {
	case m.IsWritablePrimary != nil:
		primary = *m.IsWritablePrimary
	case m.IsMaster != nil:
		primary = *m.IsMaster
	}
	if r.IsWritablePrimary != primary || r.Secondary != m.Secondary || r.SetName != m.SetName || r.Me != m.Me ||
		r.MaxWireVersion != m.MaxWireVersion || r.MsgIsDBGrid != (m.Msg == "isdbgrid") ||
		!reflect.DeepEqual(r.Hosts, m.Hosts) || !reflect.DeepEqual(r.SetVersion, m.SetVersion) {
		t.Fatalf("%s: reply %s parsed as %+v", path, js, r)
	}
}

func FuzzParseReply(f *testing.F) {
	seeds := []bson.D{
		{},
		{{Key: "isWritablePrimary", Value: true}, {Key: "maxWireVersion", Value: int32(25)}, {Key: "connectionId", Value: 3.0}},
		{{Key: "ismaster", Value: true}, {Key: "helloOk", Value: true}, {Key: "msg", Value: "isdbgrid"}},
		{{Key: "hosts", Value: bson.A{"a:1", "b:2"}}, {Key: "setName", Value: "rs"}, {Key: "tags", Value: bson.D{{Key: "dc", Value: "x"}}}},
		{{Key: "topologyVersion", Value: bson.D{{Key: "processId", Value: testOID}, {Key: "counter", Value: int64(1)}}}, {Key: "electionId", Value: testOID2}},
		{{Key: "lastWrite", Value: bson.D{{Key: "lastWriteDate", Value: bson.DateTime(1e12)}}}, {Key: "logicalSessionTimeoutMinutes", Value: int32(30)}},
		{{Key: "speculativeAuthenticate", Value: bson.D{{Key: "done", Value: true}}}, {Key: "saslSupportedMechs", Value: bson.A{"SCRAM-SHA-256"}}, {Key: "compression", Value: bson.A{"zstd"}}},
		{{Key: "maxBsonObjectSize", Value: int64(1)}, {Key: "maxMessageSizeBytes", Value: 1.0}, {Key: "serviceId", Value: testOID}},
		{{Key: "hosts", Value: bson.A{int32(1)}}, {Key: "connectionId", Value: "x"}},
	}
	for _, s := range seeds {
		f.Add([]byte(marshal(f, s)))
	}
	f.Add([]byte{5, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseReply(data)
		valid := bson.Raw(data).Validate() == nil
		if err != nil {
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if !valid {
			t.Fatal("invalid BSON accepted")
		}
		if string(r.Raw) != string(data) {
			t.Fatal("Raw differs from the input")
		}
		if r.MaxBSONObjectSize <= 0 || r.MaxMessageSizeBytes <= 0 || r.MaxWriteBatchSize <= 0 {
			t.Fatalf("non-positive limit in %+v", r)
		}
	})
}
