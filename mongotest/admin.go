package mongotest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

func pingCmd(context.Context, *Server, *Request) (bson.Raw, error) { return nil, nil }

// noopCmd accepts a command that has nothing to do in mongotest.
func noopCmd(context.Context, *Server, *Request) (bson.Raw, error) { return nil, nil }

// endSessionsCmd accepts the sessions a driver ends; mongod does not
// report unknown ones either.
func endSessionsCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	v, err := r.Body.LookupErr("endSessions")
	if err != nil || v.Type != bson.TypeArray {
		return nil, newError(14, "endSessions must be an array of session ids")
	}
	s.endSessions(v.Array())
	return nil, nil
}

// parseVersion turns "8.0.0" into buildInfo's versionArray.
func parseVersion(v string) ([4]int32, error) {
	var out [4]int32
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return out, fmt.Errorf("mongotest: Options.Version %q is not major.minor[.patch]", v)
	}
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return out, fmt.Errorf("mongotest: Options.Version %q is not major.minor[.patch]", v)
		}
		out[i] = int32(n)
	}
	return out, nil
}

func buildInfoCmd(_ context.Context, s *Server, _ *Request) (bson.Raw, error) {
	va, _ := parseVersion(s.version)
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendStringElement(dst, "version", s.version)
	dst = bson.AppendStringElement(dst, "gitVersion", "mongotest")
	dst = appendStrings(dst, "modules", nil)
	dst = bson.AppendStringElement(dst, "allocator", "system")
	dst = bson.AppendStringElement(dst, "javascriptEngine", "none")
	dst = bson.AppendStringElement(dst, "sysInfo", "deprecated")
	as, dst := bson.AppendArrayElementStart(dst, "versionArray")
	for i, n := range va {
		dst = bson.AppendInt32Element(dst, bson.ArrayKey(i), n)
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	dst = bson.AppendInt32Element(dst, "bits", 64)
	dst = bson.AppendBooleanElement(dst, "debug", false)
	dst = bson.AppendInt32Element(dst, "maxBsonObjectSize", MaxBSONObjectSize)
	dst = appendStrings(dst, "storageEngines", []string{"mongotest"})
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

func serverStatusCmd(_ context.Context, s *Server, _ *Request) (bson.Raw, error) {
	topo := s.Topology()
	process := "mongod"
	if topo.Role == RoleMongos || topo.Role == RoleLoadBalanced {
		process = "mongos"
	}
	up := time.Since(s.started)
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendStringElement(dst, "host", s.hostname())
	dst = bson.AppendStringElement(dst, "version", s.version)
	dst = bson.AppendStringElement(dst, "process", process)
	dst = bson.AppendInt64Element(dst, "pid", int64(os.Getpid()))
	dst = bson.AppendDoubleElement(dst, "uptime", float64(int64(up.Seconds())))
	dst = bson.AppendInt64Element(dst, "uptimeMillis", up.Milliseconds())
	dst = bson.AppendInt64Element(dst, "uptimeEstimate", int64(up.Seconds()))
	dst = bson.AppendDateTimeElement(dst, "localTime", time.Now().UnixMilli())
	cs, dst := bson.AppendDocumentElementStart(dst, "connections")
	current := int32(s.NumConnections())
	dst = bson.AppendInt32Element(dst, "current", current)
	dst = bson.AppendInt32Element(dst, "available", 838860-current)
	dst = bson.AppendInt32Element(dst, "totalCreated", int32(s.totalCreated.Load()))
	dst, _ = bson.AppendDocumentEnd(dst, cs)
	oc, dst := bson.AppendDocumentElementStart(dst, "opcounters")
	dst = bson.AppendInt64Element(dst, "insert", s.ops.insert.Load())
	dst = bson.AppendInt64Element(dst, "query", s.ops.query.Load())
	dst = bson.AppendInt64Element(dst, "update", s.ops.update.Load())
	dst = bson.AppendInt64Element(dst, "delete", s.ops.delete.Load())
	dst = bson.AppendInt64Element(dst, "getmore", s.ops.getmore.Load())
	dst = bson.AppendInt64Element(dst, "command", s.ops.command.Load())
	dst, _ = bson.AppendDocumentEnd(dst, oc)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

func whatsmyuriCmd(_ context.Context, _ *Server, r *Request) (bson.Raw, error) {
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendStringElement(dst, "you", r.Conn.RemoteAddr())
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}
