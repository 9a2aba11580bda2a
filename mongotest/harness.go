package mongotest

import (
	"context"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// The commands test harnesses (the drivers' unified test runners) run
// before and between tests: server parameters, listCommands, hostInfo,
// getCmdLineOpts, getLog, dbStats and collStats, with mongod's reply
// shapes and errors.

// serverParam is one parameter getParameter reports and, when runtime is
// set, setParameter changes.
type serverParam struct {
	name    string
	runtime bool      // settable at runtime (setParameter)
	kind    bson.Type // the type setParameter accepts: boolean, int32 or int64
	def     func(s *Server) bson.RawValue
}

func paramBool(b bool) bson.RawValue {
	return bson.RawValue{Type: bson.TypeBoolean, Value: bson.AppendBoolean(nil, b)}
}

func int32Value(n int32) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt32, Value: bson.AppendInt32(nil, n)}
}

func int64Value(n int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt64, Value: bson.AppendInt64(nil, n)}
}

// serverParams are the parameters mongotest knows, sorted by name. Only
// parameters whose value mongotest honours (or that change nothing in it)
// are settable.
var serverParams = []serverParam{
	{name: "authenticationMechanisms", def: func(*Server) bson.RawValue {
		start, dst := bson.AppendDocumentStart(nil)
		dst = bson.AppendStringElement(dst, "0", SCRAMSHA1)
		dst = bson.AppendStringElement(dst, "1", SCRAMSHA256)
		dst, _ = bson.AppendDocumentEnd(dst, start)
		return bson.RawValue{Type: bson.TypeArray, Value: dst}
	}},
	{name: "cursorTimeoutMillis", runtime: true, kind: bson.TypeInt64, def: func(*Server) bson.RawValue { return int64Value(600000) }},
	{name: "enableTestCommands", def: func(*Server) bson.RawValue { return paramBool(true) }},
	{name: "externalClientBaseBackoffMS", runtime: true, kind: bson.TypeInt32, def: func(*Server) bson.RawValue { return int32Value(0) }},
	{name: "featureCompatibilityVersion", def: func(s *Server) bson.RawValue {
		va, _ := parseVersion(s.version)
		start, dst := bson.AppendDocumentStart(nil)
		dst = bson.AppendStringElement(dst, "version", strconv.Itoa(int(va[0]))+"."+strconv.Itoa(int(va[1])))
		dst, _ = bson.AppendDocumentEnd(dst, start)
		return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: dst}
	}},
	{name: "ingressRequestAdmissionBurstSize", runtime: true, kind: bson.TypeInt32, def: func(*Server) bson.RawValue { return int32Value(defaultIngressBurst) }},
	{name: "ingressRequestAdmissionRatePerSec", runtime: true, kind: bson.TypeInt32, def: func(*Server) bson.RawValue { return int32Value(defaultIngressRate) }},
	{name: "ingressRequestRateLimiterEnabled", runtime: true, kind: bson.TypeBoolean, def: func(*Server) bson.RawValue { return paramBool(false) }},
	{name: "quiet", runtime: true, kind: bson.TypeBoolean, def: func(*Server) bson.RawValue { return paramBool(false) }},
	{name: "requireApiVersion", runtime: true, kind: bson.TypeBoolean, def: func(*Server) bson.RawValue { return paramBool(false) }},
	{name: "transactionLifetimeLimitSeconds", runtime: true, kind: bson.TypeInt32, def: func(*Server) bson.RawValue { return int32Value(60) }},
}

func findParam(name string) *serverParam {
	for i := range serverParams {
		if serverParams[i].name == name {
			return &serverParams[i]
		}
	}
	return nil
}

// paramStore holds the values setParameter changed.
type paramStore struct {
	mu   sync.Mutex
	vals map[string]bson.RawValue
}

// param returns a parameter's current value.
func (s *Server) param(p *serverParam) bson.RawValue {
	s.params.mu.Lock()
	v, ok := s.params.vals[p.name]
	s.params.mu.Unlock()
	if ok {
		return v
	}
	return p.def(s)
}

// internalHello tells whether r is a hello claiming internalClient,
// which mongod lets through without apiVersion under requireApiVersion
// (every other command, hello included, needs one).
func internalHello(cmd command, r *Request) bool {
	if cmd.flags&cmdHello == 0 {
		return false
	}
	v, err := r.Body.LookupErr("internalClient")
	return err == nil && (v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeBoolean && v.Boolean())
}

// requireAPIVersion tells whether setParameter turned requireApiVersion on.
func (s *Server) requireAPIVersion() bool {
	s.params.mu.Lock()
	v, ok := s.params.vals["requireApiVersion"]
	s.params.mu.Unlock()
	return ok && v.Boolean()
}

// getParameterCmd answers getParameter: "*" (or {allParameters: true})
// for every parameter, or the parameters named as fields of the command;
// {showDetails: true} wraps each value as mongod does.
func getParameterCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	v := r.Body.Lookup("getParameter")
	all, details := false, false
	switch v.Type {
	case bson.TypeString:
		all = strings.HasPrefix(v.StringValue(), "*")
	case bson.TypeEmbeddedDocument:
		opts := v.Document()
		if err := checkSubArgs(opts, "getParameter", fieldSet("allParameters", "showDetails")); err != nil {
			return nil, err
		}
		var err error
		if all, err = boolArg(opts, "allParameters", "getParameter"); err != nil {
			return nil, err
		}
		if details, err = boolArg(opts, "showDetails", "getParameter"); err != nil {
			return nil, err
		}
	}
	start, dst := bson.AppendDocumentStart(nil)
	found := false
	for i := range serverParams {
		p := &serverParams[i]
		if !all {
			if _, err := r.Body.LookupErr(p.name); err != nil {
				continue
			}
		}
		found = true
		val := s.param(p)
		if details {
			ds, d2 := bson.AppendDocumentElementStart(dst, p.name)
			d2 = bson.AppendValueElement(d2, "value", val)
			d2 = bson.AppendBooleanElement(d2, "settableAtRuntime", p.runtime)
			d2 = bson.AppendBooleanElement(d2, "settableAtStartup", true)
			dst, _ = bson.AppendDocumentEnd(d2, ds)
			continue
		}
		dst = bson.AppendValueElement(dst, p.name, val)
	}
	if !found {
		return nil, newError(mongoerr.InvalidOptions, "no option found to get")
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// setParameterCmd sets runtime parameters and replies with the first one's
// previous value as "was". Every parameter is checked before any is set.
func setParameterCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	type change struct {
		p *serverParam
		v bson.RawValue
	}
	var changes []change
	it := r.Body.Iter()
	it.Next() // setParameter itself
	for it.Next() {
		k := it.Key()
		if genericArgs[k] {
			continue
		}
		p := findParam(k)
		if p == nil {
			return nil, newError(mongoerr.InvalidOptions, "attempted to set unrecognized parameter [%s], use help:true to see options ", k)
		}
		if !p.runtime {
			return nil, newError(mongoerr.IllegalOperation, "not allowed to change [%s] at runtime", k)
		}
		for _, c := range changes {
			if c.p == p {
				return nil, newError(mongoerr.BadValue, "attempted to set parameter [%s] twice", k)
			}
		}
		v, err := coerceParam(p, it.Value())
		if err != nil {
			return nil, err
		}
		changes = append(changes, change{p, v})
	}
	if len(changes) == 0 {
		return nil, newError(mongoerr.InvalidOptions, "no option found to set, use help:true to see options ")
	}
	was := s.param(changes[0].p)
	s.params.mu.Lock()
	if s.params.vals == nil {
		s.params.vals = map[string]bson.RawValue{}
	}
	for _, c := range changes {
		s.params.vals[c.p.name] = c.v
	}
	s.params.mu.Unlock()
	s.reloadIngress()
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendValueElement(dst, "was", was)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

func coerceParam(p *serverParam, v bson.RawValue) (bson.RawValue, error) {
	switch p.kind {
	case bson.TypeBoolean:
		if v.Type == bson.TypeBoolean {
			return paramBool(v.Boolean()), nil
		}
		if n, ok := v.AsInt64OK(); ok && v.IsNumber() {
			return paramBool(n != 0), nil
		}
	case bson.TypeInt32, bson.TypeInt64:
		n, ok := v.AsInt64OK()
		if ok && v.IsNumber() {
			if n < 0 && p.name != "transactionLifetimeLimitSeconds" && p.name != "cursorTimeoutMillis" {
				return bson.RawValue{}, newError(mongoerr.BadValue, "Invalid value for parameter %s: %d is not greater than or equal to 0", p.name, n)
			}
			if n < 1 && p.name == "transactionLifetimeLimitSeconds" {
				return bson.RawValue{}, newError(mongoerr.BadValue, "Invalid value for parameter %s: %d is not greater than or equal to 1", p.name, n)
			}
			if p.kind == bson.TypeInt32 {
				if n > 1<<31-1 {
					break
				}
				return int32Value(int32(n)), nil
			}
			return int64Value(n), nil
		}
	}
	return bson.RawValue{}, newError(mongoerr.BadValue, "Invalid value for %s: %s", p.name, typeName(v.Type))
}

// tableForListCommands is the command table, set in init so that
// listCommands, itself a row of the table, can read it.
var tableForListCommands map[string]command

func init() { tableForListCommands = commands }

// stableAPIv1 are the commands of the Stable API's version 1, by their
// registered names (see commandName). isMaster is not one: mongod
// registers it apart from hello, with no API version.
var stableAPIv1 = fieldSet("abortTransaction", "aggregate", "authenticate", "bulkWrite", "collMod",
	"commitTransaction", "count", "create", "createIndexes", "delete", "drop", "dropDatabase",
	"dropIndexes", "endSessions", "explain", "find", "findAndModify", "getMore",
	"hello", "insert", "killCursors", "listCollections", "listDatabases",
	"listIndexes", "ping", "refreshSessions", "saslStart", "saslContinue", "update")

const (
	codeAPIStrictError     = 323
	codeAPIParamsNoVersion = 4886600
)

// stagesOutsideAPIv1 are the stages mongotest runs that API version 1
// does not include.
var stagesOutsideAPIv1 = fieldSet("$currentOp", "$collStats", "$listLocalSessions", "$indexStats",
	"$listSessions", "$planCacheStats")

// checkStagesAPIStrict refuses, under apiStrict: true, the stages API
// version 1 does not include.
func checkStagesAPIStrict(r *Request, stages []bson.Raw) error {
	if v, err := r.Body.LookupErr("apiStrict"); err != nil || !v.Boolean() {
		return nil
	}
	for _, st := range stages {
		if it := st.Iter(); it.Next() && stagesOutsideAPIv1[it.Key()] {
			return newError(codeAPIStrictError, "%s is not allowed with 'apiStrict: true' in API Version 1", it.Key())
		}
	}
	return nil
}

// checkAPIStrict refuses, as mongod, apiStrict or apiDeprecationErrors
// without apiVersion, and with apiStrict: true a command outside API
// version 1. (Version 1 deprecates nothing, so apiDeprecationErrors has
// nothing to refuse; stages are not checked.)
func checkAPIStrict(r *Request) error {
	_, verErr := r.Body.LookupErr("apiVersion")
	strictV, strictErr := r.Body.LookupErr("apiStrict")
	_, depErr := r.Body.LookupErr("apiDeprecationErrors")
	if verErr != nil {
		if strictErr == nil || depErr == nil {
			return newError(codeAPIParamsNoVersion, "Provided apiStrict and/or apiDeprecationErrors without passing apiVersion")
		}
		return nil
	}
	if strictErr != nil || !strictV.Boolean() || stableAPIv1[commandName(r.Name)] {
		return nil
	}
	return newError(codeAPIStrictError, "Provided apiStrict:true, but the command %s is not in API Version 1. "+
		"Information on supported commands and migrations in API Version 1 can be found at "+
		"https://dochub.mongodb.org/core/manual-versioned-api.", commandName(r.Name))
}

// listCommandsCmd lists every command the server answers, sorted by name.
func listCommandsCmd(_ context.Context, s *Server, _ *Request) (bson.Raw, error) {
	s.mu.Lock()
	flags := make(map[string]cmdFlags, len(tableForListCommands)+len(s.handlers))
	for n, c := range tableForListCommands {
		flags[n] = c.flags
	}
	for n, c := range s.handlers {
		flags[n] = c.flags
	}
	s.mu.Unlock()
	role := s.role()
	names := make([]string, 0, len(flags))
	for n, f := range flags {
		if !commandAliases[n] && f.availableOn(role) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	start, dst := bson.AppendDocumentStart(nil)
	cs, dst := bson.AppendDocumentElementStart(dst, "commands")
	for _, n := range names {
		f := flags[n]
		es, d2 := bson.AppendDocumentElementStart(dst, n)
		d2 = bson.AppendStringElement(d2, "help", "no help defined")
		d2 = bson.AppendBooleanElement(d2, "requiresAuth", f&cmdNoAuth == 0)
		d2 = bson.AppendBooleanElement(d2, "secondaryOk", true)
		d2 = bson.AppendBooleanElement(d2, "adminOnly", f&cmdAdminOnly != 0)
		var versions []string
		if stableAPIv1[n] {
			versions = []string{"1"}
		}
		d2 = appendStrings(d2, "apiVersions", versions)
		d2 = appendStrings(d2, "deprecatedApiVersions", nil)
		dst, _ = bson.AppendDocumentEnd(d2, es)
	}
	dst, _ = bson.AppendDocumentEnd(dst, cs)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// hostInfoCmd describes the machine mongotest runs on.
func hostInfoCmd(_ context.Context, s *Server, _ *Request) (bson.Raw, error) {
	host, _ := os.Hostname()
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x86_64"
	}
	osType := map[string]string{"linux": "Linux", "darwin": "Darwin", "windows": "Windows"}[runtime.GOOS]
	if osType == "" {
		osType = runtime.GOOS
	}
	start, dst := bson.AppendDocumentStart(nil)
	ss, dst := bson.AppendDocumentElementStart(dst, "system")
	dst = bson.AppendDateTimeElement(dst, "currentTime", time.Now().UnixMilli())
	dst = bson.AppendStringElement(dst, "hostname", host)
	dst = bson.AppendInt32Element(dst, "cpuAddrSize", 64)
	if mb, ok := memTotalMB(); ok {
		dst = bson.AppendInt64Element(dst, "memSizeMB", mb)
		dst = bson.AppendInt64Element(dst, "memLimitMB", mb)
	}
	dst = bson.AppendInt32Element(dst, "numCores", int32(runtime.NumCPU()))
	dst = bson.AppendInt32Element(dst, "numPhysicalCores", int32(runtime.NumCPU()))
	dst = bson.AppendInt32Element(dst, "numCpuSockets", 1)
	dst = bson.AppendStringElement(dst, "cpuArch", arch)
	dst = bson.AppendBooleanElement(dst, "numaEnabled", false)
	dst = bson.AppendInt32Element(dst, "numNumaNodes", 1)
	dst, _ = bson.AppendDocumentEnd(dst, ss)
	os, dst := bson.AppendDocumentElementStart(dst, "os")
	dst = bson.AppendStringElement(dst, "type", osType)
	dst = bson.AppendStringElement(dst, "name", runtime.GOOS)
	dst = bson.AppendStringElement(dst, "version", "")
	dst, _ = bson.AppendDocumentEnd(dst, os)
	es, dst := bson.AppendDocumentElementStart(dst, "extra")
	dst = bson.AppendStringElement(dst, "versionString", "mongotest "+s.version)
	dst, _ = bson.AppendDocumentEnd(dst, es)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// memTotalMB reads the machine's memory from /proc/meminfo, where there
// is one; elsewhere hostInfo leaves the memory fields out.
func memTotalMB() (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}

// getCmdLineOptsCmd reports the options mongod would have been started
// with to serve like this server.
func getCmdLineOptsCmd(_ context.Context, s *Server, _ *Request) (bson.Raw, error) {
	_, portStr, _ := net.SplitHostPort(s.addr)
	port, _ := strconv.Atoi(portStr)
	setName := s.Topology().SetName
	argv := []string{"mongod", "--bind_ip", "127.0.0.1", "--port", portStr}
	if setName != "" {
		argv = append(argv, "--replSet", setName)
	}
	if s.opts.Auth {
		argv = append(argv, "--auth")
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = appendStrings(dst, "argv", argv)
	ps, dst := bson.AppendDocumentElementStart(dst, "parsed")
	ns, dst := bson.AppendDocumentElementStart(dst, "net")
	dst = bson.AppendStringElement(dst, "bindIp", "127.0.0.1")
	dst = bson.AppendInt32Element(dst, "port", int32(port))
	dst, _ = bson.AppendDocumentEnd(dst, ns)
	if setName != "" {
		rs, d2 := bson.AppendDocumentElementStart(dst, "replication")
		d2 = bson.AppendStringElement(d2, "replSet", setName)
		dst, _ = bson.AppendDocumentEnd(d2, rs)
	}
	if s.opts.Auth {
		as, d2 := bson.AppendDocumentElementStart(dst, "security")
		d2 = bson.AppendStringElement(d2, "authorization", "enabled")
		dst, _ = bson.AppendDocumentEnd(d2, as)
	}
	dst, _ = bson.AppendDocumentEnd(dst, ps)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// ramLogLines is how many lines mongod's in-memory logs keep.
const ramLogLines = 1024

// getLogCmd answers getLog: "*" lists the logs; "global" gives one line
// per recent command (names only, never a body), and "startupWarnings"
// is empty: mongotest starts without warnings.
func getLogCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	v := r.Body.Lookup("getLog")
	name, ok := v.StringValueOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "Argument to getLog must be of type String; found %s of type %s", v, typeName(v.Type))
	}
	start, dst := bson.AppendDocumentStart(nil)
	switch name {
	case "*":
		dst = appendStrings(dst, "names", []string{"global", "startupWarnings"})
	case "global":
		cmds := s.Commands()
		total := len(cmds)
		if len(cmds) > ramLogLines {
			cmds = cmds[len(cmds)-ramLogLines:]
		}
		dst = bson.AppendInt32Element(dst, "totalLinesWritten", int32(total))
		as, d2 := bson.AppendArrayElementStart(dst, "log")
		for i, c := range cmds {
			line := `{"t":{"$date":"` + c.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00") +
				`"},"s":"I","c":"COMMAND","id":51803,"ctx":"conn` + strconv.FormatInt(c.ConnID, 10) +
				`","msg":"Slow query","attr":{"type":"command","ns":` + strconv.Quote(c.DB+".$cmd") +
				`,"commandName":` + strconv.Quote(c.Name) + `}}`
			d2 = bson.AppendStringElement(d2, bson.ArrayKey(i), line)
		}
		dst, _ = bson.AppendDocumentEnd(d2, as)
	case "startupWarnings":
		dst = bson.AppendInt32Element(dst, "totalLinesWritten", 0)
		dst = appendStrings(dst, "log", nil)
	default:
		// mongod's getLog fails with an errmsg and no code here.
		dst = bson.AppendDoubleElement(dst, "ok", 0)
		dst = bson.AppendStringElement(dst, "errmsg", "no RamLog named: "+name)
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// scaleArg reads dbStats' and collStats' scale option.
func scaleArg(r *Request) (int64, error) {
	n, ok, err := intArg(r.Body, "scale", r.Name)
	if err != nil || !ok {
		return 1, err
	}
	if n < 1 {
		return 0, newError(mongoerr.BadValue, "Scale factor must be greater than zero")
	}
	return n, nil
}

// dbStatsCmd reports a database's sizes, estimated as listDatabases does.
func dbStatsCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, fieldSet("scale", "freeStorage")); err != nil {
		return nil, err
	}
	scale, err := scaleArg(r)
	if err != nil {
		return nil, err
	}
	var objects, data, indexes int64
	colls := s.store.ListCollections(r.DB)
	for _, ci := range colls {
		c := s.store.Collection(r.DB, ci.Name)
		if c == nil {
			continue
		}
		objects += int64(c.Count())
		data += c.Size()
		indexes += int64(len(c.ListIndexes()))
	}
	avg := 0.0
	if objects > 0 {
		avg = float64(data) / float64(objects)
	}
	storage := data + 4096*int64(len(colls))
	indexSize := 4096 * indexes
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendStringElement(dst, "db", r.DB)
	dst = bson.AppendInt64Element(dst, "collections", int64(len(colls)))
	dst = bson.AppendInt64Element(dst, "views", 0)
	dst = bson.AppendInt64Element(dst, "objects", objects)
	dst = bson.AppendDoubleElement(dst, "avgObjSize", avg)
	dst = bson.AppendDoubleElement(dst, "dataSize", float64(data/scale))
	dst = bson.AppendDoubleElement(dst, "storageSize", float64(storage/scale))
	dst = bson.AppendInt64Element(dst, "indexes", indexes)
	dst = bson.AppendDoubleElement(dst, "indexSize", float64(indexSize/scale))
	dst = bson.AppendDoubleElement(dst, "totalSize", float64((storage+indexSize)/scale))
	dst = bson.AppendInt64Element(dst, "scaleFactor", scale)
	dst = bson.AppendDoubleElement(dst, "fsUsedSize", 0)
	dst = bson.AppendDoubleElement(dst, "fsTotalSize", 0)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// collStatsCmd reports a collection's sizes; mongod 8.0 still answers it,
// though it is deprecated for the $collStats stage.
func collStatsCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, fieldSet("scale", "verbose", "waitForLock", "numericOnly")); err != nil {
		return nil, err
	}
	name, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	scale, err := scaleArg(r)
	if err != nil {
		return nil, err
	}
	c := s.store.Collection(r.DB, name)
	if c == nil {
		return nil, newError(mongoerr.NamespaceNotFound, "Collection [%s] not found.", ns(r.DB, name))
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendStringElement(dst, "ns", ns(r.DB, name))
	dst = appendStorageStats(dst, c, scale)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// appendStorageStats appends collStats' size fields (also $collStats'
// storageStats), estimated as listDatabases does.
func appendStorageStats(dst []byte, c *store.Collection, scale int64) []byte {
	count, size := int64(c.Count()), c.Size()
	avg := int64(0)
	if count > 0 {
		avg = size / count
	}
	ixs := c.ListIndexes()
	dst = bson.AppendInt64Element(dst, "size", size/scale)
	dst = bson.AppendInt64Element(dst, "count", count)
	dst = bson.AppendInt64Element(dst, "avgObjSize", avg)
	dst = bson.AppendInt64Element(dst, "numOrphanDocs", 0)
	dst = bson.AppendInt64Element(dst, "storageSize", (size+4096)/scale)
	dst = bson.AppendInt64Element(dst, "freeStorageSize", 0)
	opts := c.Options()
	dst = bson.AppendBooleanElement(dst, "capped", opts.Capped)
	if opts.Capped {
		dst = bson.AppendInt64Element(dst, "max", opts.Max)
		dst = bson.AppendInt64Element(dst, "maxSize", opts.Size/scale)
	}
	dst = bson.AppendInt64Element(dst, "nindexes", int64(len(ixs)))
	dst = appendStrings(dst, "indexBuilds", nil)
	dst = bson.AppendInt64Element(dst, "totalIndexSize", 4096*int64(len(ixs))/scale)
	dst = bson.AppendInt64Element(dst, "totalSize", (size+4096+4096*int64(len(ixs)))/scale)
	is, dst := bson.AppendDocumentElementStart(dst, "indexSizes")
	for _, ix := range ixs {
		dst = bson.AppendInt64Element(dst, ix.Name, 4096/scale)
	}
	dst, _ = bson.AppendDocumentEnd(dst, is)
	dst = bson.AppendInt64Element(dst, "scaleFactor", scale)
	return dst
}

// collStatsAggregate runs a pipeline that starts with $collStats on a
// collection: one document with ns, host, localTime and the statistics
// asked for (storageStats, count); the rest of the pipeline runs on it.
func (s *Server) collStatsAggregate(r *Request, coll string, stages []bson.Raw, batchSize int64) (bson.Raw, error) {
	opts, ok := stages[0].Lookup("$collStats").DocumentOK()
	if !ok {
		return nil, newError(mongoerr.FailedToParse, "$collStats must take a nested object but found: %s", stages[0].Lookup("$collStats"))
	}
	if err := checkSubArgs(opts, "$collStats", fieldSet("storageStats", "count", "latencyStats", "queryExecStats")); err != nil {
		return nil, err
	}
	for _, k := range []string{"latencyStats", "queryExecStats"} {
		if _, err := opts.LookupErr(k); err == nil {
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support %s in $collStats", k)
		}
	}
	p, err := agg.Compile(stages[1:], agg.Options{DB: r.DB, Out: s.writeOut})
	if err != nil {
		return nil, err
	}
	if p.HasOut() {
		return nil, newError(mongoerr.NotImplemented, "mongotest does not support $out or $merge after $collStats")
	}
	if err := s.checkRead(r); err != nil {
		return nil, err
	}
	c := s.store.Collection(r.DB, coll)
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendStringElement(dst, "ns", ns(r.DB, coll))
	dst = bson.AppendStringElement(dst, "host", s.hostname())
	dst = bson.AppendDateTimeElement(dst, "localTime", time.Now().UnixMilli())
	if v, err := opts.LookupErr("storageStats"); err == nil {
		scale := int64(1)
		if d, ok := v.DocumentOK(); ok {
			if err := checkSubArgs(d, "$collStats.storageStats", fieldSet("scale", "verbose", "waitForLock", "numericOnly")); err != nil {
				return nil, err
			}
			if n, ok, err := intArg(d, "scale", "$collStats.storageStats"); err != nil {
				return nil, err
			} else if ok {
				if n < 1 {
					return nil, newError(mongoerr.BadValue, "BSON field 'scale' value must be >= 1, actual value '%d'", n)
				}
				scale = n
			}
		} else {
			return nil, newError(mongoerr.TypeMismatch, "BSON field '$collStats.storageStats' is the wrong type '%s', expected type 'object'", typeName(v.Type))
		}
		if c == nil {
			return nil, newError(mongoerr.NamespaceNotFound, "Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [%s] not found.", ns(r.DB, coll))
		}
		ss, d2 := bson.AppendDocumentElementStart(dst, "storageStats")
		d2 = appendStorageStats(d2, c, scale)
		dst, _ = bson.AppendDocumentEnd(d2, ss)
	}
	if _, err := opts.LookupErr("count"); err == nil {
		if c == nil {
			return nil, newError(mongoerr.NamespaceNotFound, "Unable to retrieve count in $collStats stage :: caused by :: Collection [%s] not found.", ns(r.DB, coll))
		}
		dst = bson.AppendInt64Element(dst, "count", int64(c.Count()))
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	docs, err := p.Run(func(yield func(bson.Raw) bool) { yield(dst) })
	if err != nil {
		return nil, err
	}
	return s.firstBatch(&cursor{ns: ns(r.DB, coll), docs: docs}, batchSize, false)
}

// codeAPIVersionRequired is mongod's error for a command without
// apiVersion while requireApiVersion is set.
const codeAPIVersionRequired = 498870

// codeSearchNotEnabled is mongod's error for the search index commands on
// a deployment without Atlas Search.
const codeSearchNotEnabled = 31082

func searchNotEnabled() error {
	return newError(codeSearchNotEnabled, "Using Atlas Search Database Commands and the $listSearchIndexes "+
		"aggregation stage requires additional configuration. Please connect to Atlas or an AtlasCLI "+
		"local deployment to enable. For more information on how to connect, see "+
		"https://dochub.mongodb.org/core/atlas-cli-deploy-local-reqs.")
}

// searchIndexCmd answers createSearchIndexes, updateSearchIndex and
// dropSearchIndex as a mongod without a search index management host does.
func searchIndexCmd(context.Context, *Server, *Request) (bson.Raw, error) {
	return nil, searchNotEnabled()
}

var currentOpArgs = fieldSet("allUsers", "idleConnections", "idleCursors", "idleSessions",
	"localOps", "truncateOps", "backtrace", "targetAllNodes")

// currentOpAggregate runs a pipeline that starts with $currentOp: the
// documents are the operation running it (mongotest runs no other
// command concurrently that it could describe) and, with
// idleConnections, one idle document per other connection.
func (s *Server) currentOpAggregate(r *Request, stages []bson.Raw, batchSize int64) (bson.Raw, error) {
	opts, ok := stages[0].Lookup("$currentOp").DocumentOK()
	if !ok {
		return nil, newError(mongoerr.FailedToParse, "$currentOp options must be specified in an object, but found: %s", typeName(stages[0].Lookup("$currentOp").Type))
	}
	if err := checkSubArgs(opts, "$currentOp", currentOpArgs); err != nil {
		return nil, err
	}
	idle := false
	for _, k := range []string{"allUsers", "idleConnections", "idleCursors", "idleSessions", "localOps", "truncateOps", "backtrace", "targetAllNodes"} {
		v, err := opts.LookupErr(k)
		if err != nil {
			continue
		}
		b, ok := v.BooleanOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "BSON field '$currentOp.%s' is the wrong type '%s', expected type 'bool'", k, typeName(v.Type))
		}
		switch {
		case k == "idleConnections":
			idle = b
		case b && (k == "idleCursors" || k == "idleSessions" || k == "backtrace"):
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support the %s option of $currentOp", k)
		}
	}
	p, err := agg.Compile(stages[1:], agg.Options{DB: r.DB, Out: s.writeOut})
	if err != nil {
		return nil, err
	}
	if p.HasOut() {
		return nil, newError(mongoerr.NotImplemented, "mongotest does not support $out or $merge after $currentOp")
	}
	now := time.Now()
	var ops []bson.Raw
	ops = append(ops, s.appendOp(nil, r.Conn, r, now))
	if idle {
		s.mu.Lock()
		conns := make([]*Conn, 0, len(s.conns))
		for _, c := range s.conns {
			if c != r.Conn {
				conns = append(conns, c)
			}
		}
		s.mu.Unlock()
		slices.SortFunc(conns, func(a, b *Conn) int { return int(a.id - b.id) })
		for _, c := range conns {
			ops = append(ops, s.appendOp(nil, c, nil, now))
		}
	}
	docs, err := p.Run(func(yield func(bson.Raw) bool) {
		for _, d := range ops {
			if !yield(d) {
				return
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return s.firstBatch(&cursor{ns: r.DB + ".$cmd.aggregate", docs: docs}, batchSize, false)
}

// appendOp appends one $currentOp document: the running command r on c,
// or, with r nil, c idle.
func (s *Server) appendOp(dst []byte, c *Conn, r *Request, now time.Time) bson.Raw {
	start, dst := bson.AppendDocumentStart(dst)
	dst = bson.AppendStringElement(dst, "type", "op")
	dst = bson.AppendStringElement(dst, "host", s.hostname())
	dst = bson.AppendStringElement(dst, "desc", "conn"+strconv.FormatInt(c.id, 10))
	dst = bson.AppendInt64Element(dst, "connectionId", c.id)
	dst = bson.AppendStringElement(dst, "client", c.RemoteAddr())
	if md := c.ClientMetadata(); len(md) > 0 {
		dst = bson.AppendDocumentElement(dst, "clientMetadata", md)
	}
	dst = bson.AppendBooleanElement(dst, "active", r != nil)
	dst = bson.AppendStringElement(dst, "currentOpTime", now.Format("2006-01-02T15:04:05.000-07:00"))
	if r != nil {
		dst = bson.AppendInt32Element(dst, "opid", s.opIDs.Add(1))
		if v, err := r.Body.LookupErr("lsid"); err == nil {
			dst = bson.AppendValueElement(dst, "lsid", v)
		}
		dst = bson.AppendInt64Element(dst, "secs_running", 0)
		dst = bson.AppendInt64Element(dst, "microsecs_running", 0)
		dst = bson.AppendStringElement(dst, "op", "command")
		dst = bson.AppendStringElement(dst, "ns", r.DB+".$cmd.aggregate")
		dst = bson.AppendDocumentElement(dst, "command", r.Body)
		dst = bson.AppendInt64Element(dst, "numYields", 0)
		ls, d2 := bson.AppendDocumentElementStart(dst, "locks")
		dst, _ = bson.AppendDocumentEnd(d2, ls)
		dst = bson.AppendBooleanElement(dst, "waitingForLock", false)
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}
