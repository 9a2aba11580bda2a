package handshake

import (
	"math"
	"strconv"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// Defaults for the limits a hello reply may leave out: the values current
// servers report (16 MiB documents, 48 MB messages, 100,000 writes per
// batch), so a reply without them is read as if it came from such a server.
const (
	DefaultMaxBSONObjectSize   = 16 * 1024 * 1024
	DefaultMaxMessageSizeBytes = 48000000
	DefaultMaxWriteBatchSize   = 100000
)

// TopologyVersion is a server's topologyVersion: the streaming monitor
// protocol and error handling compare them.
type TopologyVersion struct {
	ProcessID bson.ObjectID
	Counter   int64
}

// Reply holds what a connection and server monitoring need from a hello or
// legacy hello reply: the server description fields of the SDAM
// specification and the handshake's own (compression, authentication,
// serviceId). A field the reply leaves out, or sends as null, keeps its
// zero value, nil for the pointers, except the three size limits, which
// take their defaults.
type Reply struct {
	IsWritablePrimary bool // isWritablePrimary, or legacy ismaster
	HelloOK           bool
	MsgIsDBGrid       bool // msg: "isdbgrid", a mongos
	Secondary         bool
	ArbiterOnly       bool
	Hidden            bool
	IsReplicaSet      bool // isreplicaset: a member not yet initiated (RSGhost)
	IsCryptd          bool // iscryptd: a mongocryptd process

	SetName    string
	SetVersion *int64
	ElectionID *bson.ObjectID
	Primary    string
	Me         string
	Hosts      []string
	Passives   []string
	Arbiters   []string
	Tags       map[string]string

	MinWireVersion int32
	MaxWireVersion int32

	MaxBSONObjectSize   int32
	MaxMessageSizeBytes int32
	MaxWriteBatchSize   int32

	LogicalSessionTimeoutMinutes *int64

	Compression             []string // the server's compressors, from the client's offer
	SaslSupportedMechs      []string // not checked against known mechanisms, as the spec requires
	SpeculativeAuthenticate bson.Raw

	ConnectionID    int64
	ServiceID       *bson.ObjectID
	TopologyVersion *TopologyVersion
	LastWriteDate   time.Time // lastWrite.lastWriteDate, UTC; zero when absent

	// Raw is the whole reply. It and SpeculativeAuthenticate view one copy
	// of the reply, so the caller may reuse its read buffer.
	Raw bson.Raw
}

// ParseReply reads a hello or legacy hello reply. It does not interpret
// ok or an error reply: the connection checks those as for any command.
// Unknown fields are ignored; a known field of the wrong type, or invalid
// BSON, is an *Error naming the field.
func ParseReply(doc bson.Raw) (Reply, error) {
	if err := doc.Validate(); err != nil {
		return Reply{}, &Error{Reason: "reply is not valid BSON", Err: err}
	}
	raw := make(bson.Raw, len(doc))
	copy(raw, doc)
	r := Reply{
		MaxBSONObjectSize:   DefaultMaxBSONObjectSize,
		MaxMessageSizeBytes: DefaultMaxMessageSizeBytes,
		MaxWriteBatchSize:   DefaultMaxWriteBatchSize,
		Raw:                 raw,
	}
	sawWritablePrimary := false
	it := raw.Iter()
	for it.Next() {
		v := it.Value()
		if v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
			continue
		}
		key := it.KeyBytes()
		var err error
		switch string(key) {
		case "isWritablePrimary":
			r.IsWritablePrimary, err = boolField("isWritablePrimary", v)
			sawWritablePrimary = true
		case "ismaster":
			// hello replies carry isWritablePrimary; legacy hello replies
			// carry ismaster. Prefer the former if a server sent both.
			var b bool
			b, err = boolField("ismaster", v)
			if !sawWritablePrimary {
				r.IsWritablePrimary = b
			}
		case "helloOk":
			r.HelloOK, err = boolField("helloOk", v)
		case "msg":
			var s string
			s, err = stringField("msg", v)
			r.MsgIsDBGrid = s == "isdbgrid"
		case "secondary":
			r.Secondary, err = boolField("secondary", v)
		case "arbiterOnly":
			r.ArbiterOnly, err = boolField("arbiterOnly", v)
		case "hidden":
			r.Hidden, err = boolField("hidden", v)
		case "isreplicaset":
			r.IsReplicaSet, err = boolField("isreplicaset", v)
		case "iscryptd":
			r.IsCryptd, err = boolField("iscryptd", v)
		case "setName":
			r.SetName, err = stringField("setName", v)
		case "setVersion":
			var n int64
			n, err = int64Field("setVersion", v)
			r.SetVersion = &n
		case "electionId":
			var id bson.ObjectID
			id, err = objectIDField("electionId", v)
			r.ElectionID = &id
		case "primary":
			r.Primary, err = stringField("primary", v)
		case "me":
			r.Me, err = stringField("me", v)
		case "hosts":
			r.Hosts, err = stringsField("hosts", v)
		case "passives":
			r.Passives, err = stringsField("passives", v)
		case "arbiters":
			r.Arbiters, err = stringsField("arbiters", v)
		case "tags":
			r.Tags, err = tagsField(v)
		case "minWireVersion":
			r.MinWireVersion, err = int32Field("minWireVersion", v)
		case "maxWireVersion":
			r.MaxWireVersion, err = int32Field("maxWireVersion", v)
		case "maxBsonObjectSize":
			r.MaxBSONObjectSize, err = positiveInt32Field("maxBsonObjectSize", v)
		case "maxMessageSizeBytes":
			r.MaxMessageSizeBytes, err = positiveInt32Field("maxMessageSizeBytes", v)
		case "maxWriteBatchSize":
			r.MaxWriteBatchSize, err = positiveInt32Field("maxWriteBatchSize", v)
		case "logicalSessionTimeoutMinutes":
			var n int64
			n, err = int64Field("logicalSessionTimeoutMinutes", v)
			r.LogicalSessionTimeoutMinutes = &n
		case "compression":
			r.Compression, err = stringsField("compression", v)
		case "saslSupportedMechs":
			r.SaslSupportedMechs, err = stringsField("saslSupportedMechs", v)
		case "speculativeAuthenticate":
			d, ok := v.DocumentOK()
			if !ok {
				err = typeError("speculativeAuthenticate", "a document", v)
			}
			r.SpeculativeAuthenticate = d
		case "connectionId":
			r.ConnectionID, err = int64Field("connectionId", v)
		case "serviceId":
			var id bson.ObjectID
			id, err = objectIDField("serviceId", v)
			r.ServiceID = &id
		case "topologyVersion":
			r.TopologyVersion, err = topologyVersionField(v)
		case "lastWrite":
			r.LastWriteDate, err = lastWriteField(v)
		}
		if err != nil {
			return Reply{}, err
		}
	}
	if err := it.Err(); err != nil {
		return Reply{}, &Error{Reason: "reply is not valid BSON", Err: err}
	}
	return r, nil
}

func typeError(field, want string, v bson.RawValue) *Error {
	return errorf(field, "is %s, want %s", typeName(v.Type), want)
}

// typeName names a BSON type for error messages.
func typeName(t bson.Type) string {
	switch t {
	case bson.TypeDouble:
		return "a double"
	case bson.TypeString:
		return "a string"
	case bson.TypeEmbeddedDocument:
		return "a document"
	case bson.TypeArray:
		return "an array"
	case bson.TypeBinary:
		return "binary data"
	case bson.TypeObjectID:
		return "an ObjectId"
	case bson.TypeBoolean:
		return "a boolean"
	case bson.TypeDateTime:
		return "a date"
	case bson.TypeInt32:
		return "an int32"
	case bson.TypeTimestamp:
		return "a timestamp"
	case bson.TypeInt64:
		return "an int64"
	case bson.TypeDecimal128:
		return "a decimal128"
	}
	return "BSON type 0x" + strconv.FormatUint(uint64(t), 16)
}

func boolField(field string, v bson.RawValue) (bool, error) {
	b, ok := v.BooleanOK()
	if !ok {
		return false, typeError(field, "a boolean", v)
	}
	return b, nil
}

func stringField(field string, v bson.RawValue) (string, error) {
	s, ok := v.StringValueOK()
	if !ok {
		return "", typeError(field, "a string", v)
	}
	return s, nil
}

func objectIDField(field string, v bson.RawValue) (bson.ObjectID, error) {
	id, ok := v.ObjectIDOK()
	if !ok {
		return bson.ObjectID{}, typeError(field, "an ObjectId", v)
	}
	return id, nil
}

// int64Field accepts any BSON number holding an integer: servers and
// proxies send counters as int32, int64 or double.
func int64Field(field string, v bson.RawValue) (int64, error) {
	n, ok := v.AsInt64OK()
	if !ok {
		if v.IsNumber() {
			return 0, errorf(field, "%v is not an integer that fits in 64 bits", v)
		}
		return 0, typeError(field, "an integer", v)
	}
	return n, nil
}

func int32Field(field string, v bson.RawValue) (int32, error) {
	n, err := int64Field(field, v)
	if err != nil {
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, errorf(field, "%d does not fit in 32 bits", n)
	}
	return int32(n), nil
}

// positiveInt32Field reads a size limit; zero or less would make every
// message too large, so it is an error rather than a limit.
func positiveInt32Field(field string, v bson.RawValue) (int32, error) {
	n, err := int32Field(field, v)
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, errorf(field, "is %d, want a positive size", n)
	}
	return n, nil
}

func stringsField(field string, v bson.RawValue) ([]string, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, typeError(field, "an array of strings", v)
	}
	var out []string
	it := arr.Iter()
	for i := 0; it.Next(); i++ {
		s, ok := it.Value().StringValueOK()
		if !ok {
			return nil, typeError(field+"."+strconv.Itoa(i), "a string", it.Value())
		}
		out = append(out, s)
	}
	if err := it.Err(); err != nil {
		return nil, &Error{Field: field, Reason: "invalid array", Err: err}
	}
	return out, nil
}

func tagsField(v bson.RawValue) (map[string]string, error) {
	doc, ok := v.DocumentOK()
	if !ok {
		return nil, typeError("tags", "a document of strings", v)
	}
	tags := map[string]string{}
	it := doc.Iter()
	for it.Next() {
		s, ok := it.Value().StringValueOK()
		if !ok {
			return nil, typeError("tags."+it.Key(), "a string", it.Value())
		}
		tags[it.Key()] = s
	}
	if err := it.Err(); err != nil {
		return nil, &Error{Field: "tags", Reason: "invalid document", Err: err}
	}
	return tags, nil
}

func topologyVersionField(v bson.RawValue) (*TopologyVersion, error) {
	doc, ok := v.DocumentOK()
	if !ok {
		return nil, typeError("topologyVersion", "a document", v)
	}
	pid, err := doc.LookupErr("processId")
	if err != nil {
		return nil, errorf("topologyVersion.processId", "is missing")
	}
	tv := &TopologyVersion{}
	if tv.ProcessID, err = objectIDField("topologyVersion.processId", pid); err != nil {
		return nil, err
	}
	counter, err := doc.LookupErr("counter")
	if err != nil {
		return nil, errorf("topologyVersion.counter", "is missing")
	}
	if tv.Counter, err = int64Field("topologyVersion.counter", counter); err != nil {
		return nil, err
	}
	return tv, nil
}

func lastWriteField(v bson.RawValue) (time.Time, error) {
	doc, ok := v.DocumentOK()
	if !ok {
		return time.Time{}, typeError("lastWrite", "a document", v)
	}
	d, err := doc.LookupErr("lastWriteDate")
	if err != nil || d.Type == bson.TypeNull {
		return time.Time{}, nil
	}
	ms, ok := d.DateTimeOK()
	if !ok {
		return time.Time{}, typeError("lastWrite.lastWriteDate", "a date", d)
	}
	return time.UnixMilli(ms).UTC(), nil
}
