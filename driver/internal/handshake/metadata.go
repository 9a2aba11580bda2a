package handshake

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mongoscope/mongoscope/bson"
)

// FaaS names for client.env.name.
const (
	envAWSLambda = "aws.lambda"
	envAzure     = "azure.func"
	envGCP       = "gcp.func"
	envVercel    = "vercel"
)

// host is what Metadata learns about the machine and the Go toolchain; tests
// pass fixed values so sizes do not depend on the build.
type host struct {
	osType, osName, arch, platform string
}

func runtimeHost() host {
	return host{
		osType:   osType(runtime.GOOS),
		osName:   runtime.GOOS,
		arch:     runtime.GOARCH,
		platform: runtime.Version() + " " + runtime.Compiler,
	}
}

// osType maps GOOS to what uname -s prints, as the specification asks for
// client.os.type.
func osType(goos string) string {
	switch goos {
	case "linux", "android":
		return "Linux"
	case "darwin", "ios":
		return "Darwin"
	case "windows":
		return "Windows"
	case "freebsd":
		return "FreeBSD"
	case "openbsd":
		return "OpenBSD"
	case "netbsd":
		return "NetBSD"
	case "dragonfly":
		return "DragonFly"
	case "solaris", "illumos":
		return "SunOS"
	case "aix":
		return "AIX"
	case "":
		return "unknown"
	}
	return goos
}

// env is client.env before encoding. A zero int32 field is absent: no
// variable the specification reads can meaningfully be 0.
type env struct {
	name         string
	timeoutSec   int32
	hasTimeout   bool
	memoryMB     int32
	hasMemory    bool
	region       string
	runtime      string // container.runtime
	orchestrator string // container.orchestrator
}

func (e env) empty() bool {
	return e.name == "" && !e.hasTimeout && !e.hasMemory && e.region == "" &&
		e.runtime == "" && e.orchestrator == ""
}

// metadata is the client document before encoding; truncation edits it.
type metadata struct {
	appName        string
	driverName     string
	driverVersion  string
	osType         string
	osName         string
	arch           string
	platform       string
	omitOSDetails  bool
	env            env
	envNameOnly    bool
	omitEnv        bool
	omitPlatform   bool
	platformCutLen int // platform length after truncation; -1 when not truncated
}

// Metadata builds the client metadata document sent in the handshake. A
// client builds it once, and again when a wrapping library appends its
// DriverInfo; every new connection sends the latest one.
//
// The document holds driver, os, platform (the Go version), application
// when AppName is set, and env when a FaaS provider or a container is
// detected. When it would exceed 512 bytes it is cut down in the
// specification's order: env fields other than env.name, then os fields
// other than os.type, then env, then the end of platform. An AppName over
// 128 bytes, DriverInfo containing '|', invalid UTF-8, or DriverInfo so long
// that the document cannot fit even then, is an *Error.
func Metadata(o Options) (bson.Raw, error) {
	return buildMetadata(o, runtimeHost())
}

func buildMetadata(o Options, h host) (bson.Raw, error) {
	if len(o.AppName) > MaxAppNameSize {
		return nil, errorf("AppName", "is %d bytes; the handshake allows at most %d", len(o.AppName), MaxAppNameSize)
	}
	if !utf8.ValidString(o.AppName) {
		return nil, errorf("AppName", "is not valid UTF-8")
	}
	m := metadata{
		appName:        o.AppName,
		driverName:     DriverName,
		driverVersion:  Version,
		osType:         h.osType,
		osName:         h.osName,
		arch:           h.arch,
		platform:       h.platform,
		platformCutLen: -1,
	}
	if m.osType == "" {
		m.osType = "unknown"
	}
	if err := m.appendDriverInfo(o.DriverInfo); err != nil {
		return nil, err
	}
	if len(m.driverName)+len(m.driverVersion) > MaxMetadataSize {
		return nil, errorf("DriverInfo", "driver name and version are %d bytes together; the whole client metadata may be at most %d", len(m.driverName)+len(m.driverVersion), MaxMetadataSize)
	}
	if len(m.platform) > MaxMetadataSize {
		// Only a prefix this long can survive truncation, and cutting here
		// keeps every encoding below small.
		m.platform = m.platform[:truncateUTF8(m.platform, MaxMetadataSize)]
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	exists := o.FileExists
	if exists == nil {
		exists = fileExists
	}
	m.env = detectEnv(getenv, exists)

	doc := m.encode(nil)
	// The specification's truncation steps, applied cumulatively until the
	// document fits.
	steps := []func(){
		func() { m.envNameOnly = true },
		func() { m.omitOSDetails = true },
		func() { m.omitEnv = true },
	}
	for _, step := range steps {
		if len(doc) <= MaxMetadataSize {
			return doc, nil
		}
		step()
		doc = m.encode(doc[:0])
	}
	if len(doc) <= MaxMetadataSize {
		return doc, nil
	}
	over := len(doc) - MaxMetadataSize
	if over < len(m.platform) {
		m.platformCutLen = truncateUTF8(m.platform, len(m.platform)-over)
	} else {
		// Nothing of platform can stay; dropping the element saves its
		// header bytes too.
		m.omitPlatform = true
	}
	doc = m.encode(doc[:0])
	if len(doc) > MaxMetadataSize {
		return nil, errorf("DriverInfo", "client metadata is %d bytes even without platform, os details and env; the handshake allows at most %d", len(doc), MaxMetadataSize)
	}
	return doc, nil
}

// truncateUTF8 returns the largest length <= n at which s can be cut
// without splitting a UTF-8 sequence.
func truncateUTF8(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// appendDriverInfo joins the wrapping libraries' fields to the driver's with
// '|', skipping any DriverInfo equal to one already appended (the
// specification's duplicate rule; empty fields count as unset, which string
// equality already gives).
func (m *metadata) appendDriverInfo(infos []DriverInfo) error {
	for i, di := range infos {
		for _, f := range [...]struct{ name, value string }{
			{"Name", di.Name}, {"Version", di.Version}, {"Platform", di.Platform},
		} {
			if strings.Contains(f.value, "|") {
				return errorf("DriverInfo["+strconv.Itoa(i)+"]."+f.name, "contains '|', the metadata delimiter")
			}
			if !utf8.ValidString(f.value) {
				return errorf("DriverInfo["+strconv.Itoa(i)+"]."+f.name, "is not valid UTF-8")
			}
		}
		dup := false
		for _, prev := range infos[:i] {
			if prev == di {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if di.Name != "" {
			m.driverName += "|" + di.Name
		}
		if di.Version != "" {
			m.driverVersion += "|" + di.Version
		}
		if di.Platform != "" {
			m.platform += "|" + di.Platform
		}
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// detectEnv reads the FaaS and container variables the specification lists.
func detectEnv(getenv func(string) string, exists func(string) bool) env {
	var e env
	var names []string
	if strings.HasPrefix(getenv("AWS_EXECUTION_ENV"), "AWS_Lambda_") || getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		names = append(names, envAWSLambda)
	}
	if getenv("FUNCTIONS_WORKER_RUNTIME") != "" {
		names = append(names, envAzure)
	}
	if getenv("K_SERVICE") != "" || getenv("FUNCTION_NAME") != "" {
		names = append(names, envGCP)
	}
	if getenv("VERCEL") != "" {
		names = append(names, envVercel)
	}
	switch {
	case len(names) == 1:
		e.name = names[0]
	case len(names) == 2 && names[0] == envAWSLambda && names[1] == envVercel:
		// Vercel runs on AWS Lambda and sets both.
		e.name = envVercel
	}
	switch e.name {
	case envAWSLambda:
		e.region = getenv("AWS_REGION")
		e.memoryMB, e.hasMemory = parseInt32(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))
	case envGCP:
		e.memoryMB, e.hasMemory = parseInt32(getenv("FUNCTION_MEMORY_MB"))
		e.timeoutSec, e.hasTimeout = parseInt32(getenv("FUNCTION_TIMEOUT_SEC"))
		e.region = getenv("FUNCTION_REGION")
	case envVercel:
		e.region = getenv("VERCEL_REGION")
	}
	if !utf8.ValidString(e.region) {
		// Not a string the server can store; the specification says a value
		// of the wrong type is omitted silently.
		e.region = ""
	}
	if exists("/.dockerenv") {
		e.runtime = "docker"
	}
	if getenv("KUBERNETES_SERVICE_HOST") != "" {
		e.orchestrator = "kubernetes"
	}
	return e
}

// parseInt32 reads a decimal int32; anything else is "absent".
func parseInt32(s string) (int32, bool) {
	if s == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// encode writes the client document into dst in the specification's field
// order.
func (m *metadata) encode(dst []byte) bson.Raw {
	start, dst := bson.AppendDocumentStart(dst)
	if m.appName != "" {
		var app int
		app, dst = bson.AppendDocumentElementStart(dst, "application")
		dst = bson.AppendStringElement(dst, "name", m.appName)
		dst = endDoc(dst, app)
	}
	var drv int
	drv, dst = bson.AppendDocumentElementStart(dst, "driver")
	dst = bson.AppendStringElement(dst, "name", m.driverName)
	dst = bson.AppendStringElement(dst, "version", m.driverVersion)
	dst = endDoc(dst, drv)

	var osd int
	osd, dst = bson.AppendDocumentElementStart(dst, "os")
	dst = bson.AppendStringElement(dst, "type", m.osType)
	if !m.omitOSDetails {
		if m.osName != "" {
			dst = bson.AppendStringElement(dst, "name", m.osName)
		}
		if m.arch != "" {
			dst = bson.AppendStringElement(dst, "architecture", m.arch)
		}
	}
	dst = endDoc(dst, osd)

	if !m.omitPlatform && m.platform != "" {
		p := m.platform
		if m.platformCutLen >= 0 {
			p = p[:m.platformCutLen]
		}
		dst = bson.AppendStringElement(dst, "platform", p)
	}
	if !m.omitEnv {
		dst = m.encodeEnv(dst)
	}
	return endDoc(dst, start)
}

func (m *metadata) encodeEnv(dst []byte) []byte {
	e := m.env
	if m.envNameOnly {
		e = env{name: e.name}
	}
	if e.empty() {
		return dst
	}
	var start int
	start, dst = bson.AppendDocumentElementStart(dst, "env")
	if e.name != "" {
		dst = bson.AppendStringElement(dst, "name", e.name)
	}
	if e.hasTimeout {
		dst = bson.AppendInt32Element(dst, "timeout_sec", e.timeoutSec)
	}
	if e.hasMemory {
		dst = bson.AppendInt32Element(dst, "memory_mb", e.memoryMB)
	}
	if e.region != "" {
		dst = bson.AppendStringElement(dst, "region", e.region)
	}
	if e.runtime != "" || e.orchestrator != "" {
		var c int
		c, dst = bson.AppendDocumentElementStart(dst, "container")
		if e.runtime != "" {
			dst = bson.AppendStringElement(dst, "runtime", e.runtime)
		}
		if e.orchestrator != "" {
			dst = bson.AppendStringElement(dst, "orchestrator", e.orchestrator)
		}
		dst = endDoc(dst, c)
	}
	return endDoc(dst, start)
}

// endDoc closes a document this package opened. AppendDocumentEnd fails only
// for a start offset it did not hand out or a document over 2 GiB; the
// metadata document is bounded to a few KiB before it is encoded.
func endDoc(dst []byte, start int) []byte {
	out, err := bson.AppendDocumentEnd(dst, start)
	if err != nil {
		return dst
	}
	return out
}
