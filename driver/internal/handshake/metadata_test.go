package handshake

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mongoscope/mongoscope/bson"
)

// testHost fixes the machine-dependent fields so expected documents and
// sizes do not depend on the build.
var testHost = host{osType: "Linux", osName: "linux", arch: "amd64", platform: "go1.26.0 gc"}

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func noFile(string) bool { return false }

func dockerFile(p string) bool { return p == "/.dockerenv" }

// clientDoc builds the expected client document independently of encode.
func clientDoc(t testing.TB, app string, driverName, driverVersion string, os bson.D, platform string, env bson.D) []byte {
	t.Helper()
	var d bson.D
	if app != "" {
		d = append(d, bson.E{Key: "application", Value: bson.D{{Key: "name", Value: app}}})
	}
	d = append(d,
		bson.E{Key: "driver", Value: bson.D{{Key: "name", Value: driverName}, {Key: "version", Value: driverVersion}}},
		bson.E{Key: "os", Value: os},
	)
	if platform != "" {
		d = append(d, bson.E{Key: "platform", Value: platform})
	}
	if env != nil {
		d = append(d, bson.E{Key: "env", Value: env})
	}
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var fullOS = bson.D{{Key: "type", Value: "Linux"}, {Key: "name", Value: "linux"}, {Key: "architecture", Value: "amd64"}}
var typeOnlyOS = bson.D{{Key: "type", Value: "Linux"}}

func TestMetadataEnvironment(t *testing.T) {
	const lambda = "AWS_Lambda_java8"
	tests := []struct {
		name   string
		prose  string // the handshake prose test this case is, if any
		vars   map[string]string
		docker bool
		want   bson.D // client.env; nil when omitted
	}{
		{"valid AWS", "1.1", map[string]string{"AWS_EXECUTION_ENV": lambda, "AWS_REGION": "us-east-2", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, false,
			bson.D{{Key: "name", Value: "aws.lambda"}, {Key: "memory_mb", Value: int32(1024)}, {Key: "region", Value: "us-east-2"}}},
		{"valid Azure", "1.2", map[string]string{"FUNCTIONS_WORKER_RUNTIME": "node"}, false,
			bson.D{{Key: "name", Value: "azure.func"}}},
		{"valid GCP", "1.3", map[string]string{"K_SERVICE": "servicename", "FUNCTION_MEMORY_MB": "1024", "FUNCTION_TIMEOUT_SEC": "60", "FUNCTION_REGION": "us-central1"}, false,
			bson.D{{Key: "name", Value: "gcp.func"}, {Key: "timeout_sec", Value: int32(60)}, {Key: "memory_mb", Value: int32(1024)}, {Key: "region", Value: "us-central1"}}},
		{"valid Vercel", "1.4", map[string]string{"VERCEL": "1", "VERCEL_REGION": "cdg1"}, false,
			bson.D{{Key: "name", Value: "vercel"}, {Key: "region", Value: "cdg1"}}},
		{"invalid: multiple providers", "1.5", map[string]string{"AWS_EXECUTION_ENV": lambda, "FUNCTIONS_WORKER_RUNTIME": "node"}, false, nil},
		{"invalid: long string (truncation keeps env.name)", "1.6", map[string]string{"AWS_EXECUTION_ENV": lambda, "AWS_REGION": strings.Repeat("a", 512)}, false,
			bson.D{{Key: "name", Value: "aws.lambda"}}},
		{"invalid: wrong types", "1.7", map[string]string{"AWS_EXECUTION_ENV": lambda, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "big"}, false,
			bson.D{{Key: "name", Value: "aws.lambda"}}},
		{"invalid: AWS_EXECUTION_ENV without AWS_Lambda_ prefix", "1.8", map[string]string{"AWS_EXECUTION_ENV": "EC2"}, false, nil},
		{"valid container and FaaS", "1.9", map[string]string{"AWS_EXECUTION_ENV": lambda, "AWS_REGION": "us-east-2", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "KUBERNETES_SERVICE_HOST": "1"}, false,
			bson.D{{Key: "name", Value: "aws.lambda"}, {Key: "memory_mb", Value: int32(1024)}, {Key: "region", Value: "us-east-2"},
				{Key: "container", Value: bson.D{{Key: "orchestrator", Value: "kubernetes"}}}}},

		// The specification's tables beyond the prose tests.
		{"AWS via AWS_LAMBDA_RUNTIME_API", "", map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "AWS_REGION": "eu-west-1"}, false,
			bson.D{{Key: "name", Value: "aws.lambda"}, {Key: "region", Value: "eu-west-1"}}},
		{"AWS_EXECUTION_ENV prefix is case-sensitive", "", map[string]string{"AWS_EXECUTION_ENV": "aws_lambda_java8"}, false, nil},
		{"GCP via FUNCTION_NAME", "", map[string]string{"FUNCTION_NAME": "f", "FUNCTION_REGION": "us-east1"}, false,
			bson.D{{Key: "name", Value: "gcp.func"}, {Key: "region", Value: "us-east1"}}},
		{"GCP wrong types omitted", "", map[string]string{"K_SERVICE": "s", "FUNCTION_MEMORY_MB": "1024MB", "FUNCTION_TIMEOUT_SEC": "9999999999"}, false,
			bson.D{{Key: "name", Value: "gcp.func"}}},
		{"GCP negative int32 is an int32", "", map[string]string{"K_SERVICE": "s", "FUNCTION_TIMEOUT_SEC": "-1"}, false,
			bson.D{{Key: "name", Value: "gcp.func"}, {Key: "timeout_sec", Value: int32(-1)}}},
		{"AWS ignores other providers' fields", "", map[string]string{"AWS_EXECUTION_ENV": lambda, "FUNCTION_REGION": "x", "VERCEL_REGION": "y", "FUNCTION_TIMEOUT_SEC": "5"}, false,
			bson.D{{Key: "name", Value: "aws.lambda"}}},
		{"Vercel takes precedence over AWS", "", map[string]string{"VERCEL": "1", "VERCEL_REGION": "cdg1", "AWS_EXECUTION_ENV": lambda, "AWS_REGION": "us-east-2"}, false,
			bson.D{{Key: "name", Value: "vercel"}, {Key: "region", Value: "cdg1"}}},
		{"Vercel with Azure is ambiguous", "", map[string]string{"VERCEL": "1", "FUNCTIONS_WORKER_RUNTIME": "node"}, false, nil},
		{"AWS, Vercel and GCP is ambiguous", "", map[string]string{"VERCEL": "1", "AWS_EXECUTION_ENV": lambda, "K_SERVICE": "s"}, false, nil},
		{"GCP with Azure is ambiguous", "", map[string]string{"K_SERVICE": "s", "FUNCTIONS_WORKER_RUNTIME": "node"}, false, nil},
		{"empty variables are unset", "", map[string]string{"VERCEL": "", "FUNCTIONS_WORKER_RUNTIME": "", "K_SERVICE": ""}, false, nil},
		{"invalid UTF-8 region omitted", "", map[string]string{"VERCEL": "1", "VERCEL_REGION": "\xff"}, false,
			bson.D{{Key: "name", Value: "vercel"}}},
		{"no FaaS, no container", "", nil, false, nil},
		{"docker only", "", nil, true,
			bson.D{{Key: "container", Value: bson.D{{Key: "runtime", Value: "docker"}}}}},
		{"docker and kubernetes", "", map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, true,
			bson.D{{Key: "container", Value: bson.D{{Key: "runtime", Value: "docker"}, {Key: "orchestrator", Value: "kubernetes"}}}}},
		{"ambiguous FaaS keeps the container", "", map[string]string{"VERCEL": "1", "K_SERVICE": "s"}, true,
			bson.D{{Key: "container", Value: bson.D{{Key: "runtime", Value: "docker"}}}}},
	}
	prose := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exists := noFile
			if tc.docker {
				exists = dockerFile
			}
			got, err := buildMetadata(Options{Getenv: envOf(tc.vars), FileExists: exists}, testHost)
			if err != nil {
				t.Fatal(err)
			}
			// Case 1.6 needs truncation step 1 only, so os stays whole.
			want := clientDoc(t, "", DriverName, Version, fullOS, testHost.platform, tc.want)
			if !bytes.Equal(got, want) {
				t.Fatalf("metadata\n got %v\nwant %v", got, bson.Raw(want))
			}
			if len(got) > MaxMetadataSize {
				t.Fatalf("metadata is %d bytes", len(got))
			}
		})
		if tc.prose != "" {
			prose++
		}
	}
	t.Logf("handshake prose Test 1 (environment metadata): %d passed, 0 skipped; %d more cases from the spec's tables", prose, len(tests)-prose)
}

type truncCase struct {
	name string
	host host
	app  string
	di   []DriverInfo
	want func() []byte // the expected document; it may compute sizes
}

// TestMetadataTruncation builds documents that need each truncation step in
// turn and checks that exactly the specification's cumulative steps were
// taken.
func TestMetadataTruncation(t *testing.T) {
	awsVars := map[string]string{"AWS_EXECUTION_ENV": "AWS_Lambda_java8", "AWS_REGION": "us-east-2", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "KUBERNETES_SERVICE_HOST": "h"}
	envNameOnly := bson.D{{Key: "name", Value: "aws.lambda"}}
	fullEnv := bson.D{{Key: "name", Value: "aws.lambda"}, {Key: "memory_mb", Value: int32(1024)}, {Key: "region", Value: "us-east-2"},
		{Key: "container", Value: bson.D{{Key: "orchestrator", Value: "kubernetes"}}}}

	// padFor returns a platform suffix that makes doc(suffix) exactly size bytes.
	padFor := func(size int, build func(p string) []byte) string {
		base := len(build(""))
		if size < base {
			t.Fatalf("base document is already %d bytes", base)
		}
		return strings.Repeat("p", size-base)
	}
	fullPlatform := func(suffix string) string { return testHost.platform + "|" + suffix }
	wrapperName, wrapperVersion := DriverName+"|lib", Version+"|1.0"

	tests := []truncCase{
		{
			name: "fits: nothing removed",
			host: testHost,
			want: func() []byte { return clientDoc(t, "", DriverName, Version, fullOS, testHost.platform, fullEnv) },
		},
		func() truncCase {
			// A platform that fits with env.name but not with the full env.
			suffix := padFor(MaxMetadataSize, func(p string) []byte {
				return clientDoc(t, "", wrapperName, wrapperVersion, fullOS, fullPlatform(p), envNameOnly)
			})
			return truncCase{
				name: "step 1: env keeps only name",
				host: testHost,
				di:   []DriverInfo{{Name: "lib", Version: "1.0", Platform: suffix}},
				want: func() []byte {
					return clientDoc(t, "", wrapperName, wrapperVersion, fullOS, fullPlatform(suffix), envNameOnly)
				},
			}
		}(),
		{
			name: "step 2: os keeps only type",
			host: host{osType: "Linux", osName: strings.Repeat("n", 400), arch: "amd64", platform: testHost.platform},
			want: func() []byte {
				return clientDoc(t, "", DriverName, Version, typeOnlyOS, testHost.platform, envNameOnly)
			},
		},
		func() truncCase {
			// Fits exactly without env, so env.name alone is too much.
			suffix := padFor(MaxMetadataSize, func(p string) []byte {
				return clientDoc(t, "", wrapperName, wrapperVersion, typeOnlyOS, fullPlatform(p), nil)
			})
			return truncCase{
				name: "step 3: env omitted",
				host: testHost,
				di:   []DriverInfo{{Name: "lib", Version: "1.0", Platform: suffix}},
				want: func() []byte {
					return clientDoc(t, "", wrapperName, wrapperVersion, typeOnlyOS, fullPlatform(suffix), nil)
				},
			}
		}(),
		{
			name: "step 4: platform truncated to exactly 512 bytes",
			host: testHost,
			app:  strings.Repeat("a", MaxAppNameSize),
			di:   []DriverInfo{{Name: "lib", Version: "1.0", Platform: strings.Repeat("x", 1000)}},
			want: func() []byte {
				full := fullPlatform(strings.Repeat("x", 1000))
				over := len(clientDoc(t, strings.Repeat("a", MaxAppNameSize), wrapperName, wrapperVersion, typeOnlyOS, full, nil)) - MaxMetadataSize
				return clientDoc(t, strings.Repeat("a", MaxAppNameSize), wrapperName, wrapperVersion, typeOnlyOS, full[:len(full)-over], nil)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildMetadata(Options{AppName: tc.app, DriverInfo: tc.di, Getenv: envOf(awsVars), FileExists: noFile}, tc.host)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want()
			if !bytes.Equal(got, want) {
				t.Fatalf("metadata (%d bytes)\n got %v\nwant %v", len(got), got, bson.Raw(want))
			}
			if len(got) > MaxMetadataSize {
				t.Fatalf("metadata is %d bytes", len(got))
			}
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMetadataTruncationKeepsUTF8 cuts a platform of two-byte runes; the
// cut must not split one, so the result may be a byte short of 512.
func TestMetadataTruncationKeepsUTF8(t *testing.T) {
	for pad := 0; pad < 4; pad++ {
		di := []DriverInfo{{Name: strings.Repeat("n", pad), Platform: strings.Repeat("é", 400)}}
		got, err := buildMetadata(Options{DriverInfo: di, Getenv: envOf(nil), FileExists: noFile}, testHost)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > MaxMetadataSize || len(got) < MaxMetadataSize-1 {
			t.Fatalf("pad %d: metadata is %d bytes, want 511 or 512", pad, len(got))
		}
		p, ok := got.Lookup("platform").StringValueOK()
		if !ok || !utf8.ValidString(p) || !strings.HasPrefix(testHost.platform+"|"+strings.Repeat("é", 400), p) {
			t.Fatalf("pad %d: platform %q is not a valid prefix", pad, p)
		}
		if err := got.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMetadataErrors(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		field string
	}{
		{"appname over 128 bytes", Options{AppName: strings.Repeat("a", 129)}, "AppName"},
		{"appname over 128 bytes in runes", Options{AppName: strings.Repeat("é", 65)}, "AppName"},
		{"appname not UTF-8", Options{AppName: "\xff"}, "AppName"},
		{"delimiter in name", Options{DriverInfo: []DriverInfo{{Name: "a|b"}}}, "DriverInfo[0].Name"},
		{"delimiter in version", Options{DriverInfo: []DriverInfo{{Name: "a"}, {Name: "b", Version: "1|2"}}}, "DriverInfo[1].Version"},
		{"delimiter in platform", Options{DriverInfo: []DriverInfo{{Platform: "|"}}}, "DriverInfo[0].Platform"},
		{"driver info not UTF-8", Options{DriverInfo: []DriverInfo{{Name: "\xc3"}}}, "DriverInfo[0].Name"},
		{"driver name too long", Options{DriverInfo: []DriverInfo{{Name: strings.Repeat("n", 600)}}}, "DriverInfo"},
		{"name and version fit alone, not with the rest", Options{AppName: strings.Repeat("a", 128), DriverInfo: []DriverInfo{{Name: strings.Repeat("n", 250), Version: strings.Repeat("v", 200)}}}, "DriverInfo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Getenv = envOf(nil)
			tc.opts.FileExists = noFile
			_, err := buildMetadata(tc.opts, testHost)
			var he *Error
			if !errors.As(err, &he) || he.Field != tc.field {
				t.Fatalf("error %v, want *Error for %s", err, tc.field)
			}
		})
	}
	// The limit is inclusive.
	if _, err := buildMetadata(Options{AppName: strings.Repeat("a", 128), Getenv: envOf(nil), FileExists: noFile}, testHost); err != nil {
		t.Fatal(err)
	}
}

// driverFields reads the fields DriverInfo changes.
func driverFields(t *testing.T, doc bson.Raw) (name, version, platform string) {
	t.Helper()
	return doc.Lookup("driver", "name").StringValue(), doc.Lookup("driver", "version").StringValue(), doc.Lookup("platform").StringValue()
}

// TestMetadataDriverInfo covers the Client Metadata Update prose tests. A
// client appending DriverInfo after initialization rebuilds its metadata
// with the longer list, so each "append" step here is a longer list.
func TestMetadataDriverInfo(t *testing.T) {
	library := DriverInfo{Name: "library", Version: "1.2", Platform: "Library Platform"}
	build := func(infos ...DriverInfo) bson.Raw {
		t.Helper()
		doc, err := buildMetadata(Options{AppName: "app", DriverInfo: infos, Getenv: envOf(nil), FileExists: noFile}, testHost)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	d, v, p := DriverName, Version, testHost.platform
	passed := 0

	// Tests 1 and 2: appended, not replaced; unset fields stay unchanged.
	for _, tc := range []struct {
		in                     DriverInfo
		wantName, wantV, wantP string
	}{
		{DriverInfo{"framework", "2.0", "Framework Platform"}, "library|framework", "1.2|2.0", "Library Platform|Framework Platform"},
		{DriverInfo{"framework", "2.0", ""}, "library|framework", "1.2|2.0", "Library Platform"},
		{DriverInfo{"framework", "", "Framework Platform"}, "library|framework", "1.2", "Library Platform|Framework Platform"},
		{DriverInfo{"framework", "", ""}, "library|framework", "1.2", "Library Platform"},
	} {
		initial := build(library)
		got := build(library, tc.in)
		n, ver, plat := driverFields(t, got)
		if n != d+"|"+tc.wantName || ver != v+"|"+tc.wantV || plat != p+"|"+tc.wantP {
			t.Errorf("append %+v: got %q %q %q", tc.in, n, ver, plat)
		}
		if !sameExceptDriver(t, initial, got) {
			t.Errorf("append %+v changed other fields", tc.in)
		}
		passed += 2 // the same case in Test 1 and Test 2
	}

	// Test 3: duplicates of the earlier DriverInfo append nothing.
	for i, tc := range []DriverInfo{
		{"library", "1.2", "Library Platform"},
		{"framework", "1.2", "Library Platform"},
		{"library", "2.0", "Library Platform"},
		{"library", "1.2", "Framework Platform"},
		{"framework", "2.0", "Library Platform"},
		{"framework", "1.2", "Framework Platform"},
		{"library", "2.0", "Framework Platform"},
	} {
		n, ver, plat := driverFields(t, build(library, tc))
		wantN, wantV, wantP := "library", "1.2", "Library Platform"
		if i > 0 {
			wantN, wantV, wantP = wantN+"|"+tc.Name, wantV+"|"+tc.Version, wantP+"|"+tc.Platform
		}
		if n != d+"|"+wantN || ver != v+"|"+wantV || plat != p+"|"+wantP {
			t.Errorf("Test 3 case %d: got %q %q %q", i+1, n, ver, plat)
		}
		passed++
	}

	framework := DriverInfo{"framework", "2.0", "Framework Platform"}
	identical := []struct {
		name   string
		before []DriverInfo
		after  []DriverInfo
	}{
		{"Test 4: library, framework, library again", []DriverInfo{library, framework}, []DriverInfo{library, framework, library}},
		{"Test 5: identical to initial", []DriverInfo{library}, []DriverInfo{library, library}},
		{"Test 6: identical to initial, separated", []DriverInfo{library, {"framework", "1.2", "Library Platform"}}, []DriverInfo{library, {"framework", "1.2", "Library Platform"}, library}},
		{"Test 7 case 1: unset name", []DriverInfo{{"", "1.2", "Library Platform"}}, []DriverInfo{{"", "1.2", "Library Platform"}, {"", "1.2", "Library Platform"}}},
		{"Test 7 case 2: empty version", []DriverInfo{{"library", "", "Library Platform"}}, []DriverInfo{{"library", "", "Library Platform"}, {"library", "", "Library Platform"}}},
		{"Test 7 case 3: empty platform", []DriverInfo{{"library", "1.2", ""}}, []DriverInfo{{"library", "1.2", ""}, {"library", "1.2", ""}}},
		{"Test 8 case 1: unset name", []DriverInfo{{"", "1.2", "Library Platform"}}, []DriverInfo{{"", "1.2", "Library Platform"}, {"", "1.2", "Library Platform"}}},
		{"Test 8 case 2: empty version", []DriverInfo{{"library", "", "Library Platform"}}, []DriverInfo{{"library", "", "Library Platform"}, {"library", "", "Library Platform"}}},
		{"Test 8 case 3: empty platform", []DriverInfo{{"library", "1.2", ""}}, []DriverInfo{{"library", "1.2", ""}, {"library", "1.2", ""}}},
	}
	for _, tc := range identical {
		if before, after := build(tc.before...), build(tc.after...); !bytes.Equal(before, after) {
			t.Errorf("%s: metadata changed\nbefore %v\nafter  %v", tc.name, before, after)
		}
		passed++
	}
	// An all-empty DriverInfo appends nothing.
	if !bytes.Equal(build(), build(DriverInfo{})) {
		t.Error("empty DriverInfo changed the metadata")
	}
	t.Logf("handshake client metadata update prose Tests 1-8: %d passed, 0 skipped", passed)
}

// sameExceptDriver compares two client documents ignoring driver and platform.
func sameExceptDriver(t *testing.T, a, b bson.Raw) bool {
	t.Helper()
	strip := func(doc bson.Raw) bson.D {
		d, err := bson.DecodeD(doc)
		if err != nil {
			t.Fatal(err)
		}
		var out bson.D
		for _, e := range d {
			if e.Key != "driver" && e.Key != "platform" {
				out = append(out, e)
			}
		}
		return out
	}
	x, err1 := bson.Marshal(strip(a))
	y, err2 := bson.Marshal(strip(b))
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// TestMetadataRuntime checks the exported entry point against this machine
// and the default hooks (os.Getenv, os.Stat).
func TestMetadataRuntime(t *testing.T) {
	for _, k := range []string{"AWS_EXECUTION_ENV", "AWS_LAMBDA_RUNTIME_API", "FUNCTIONS_WORKER_RUNTIME", "K_SERVICE", "FUNCTION_NAME", "KUBERNETES_SERVICE_HOST"} {
		t.Setenv(k, "")
	}
	t.Setenv("VERCEL", "1")
	t.Setenv("VERCEL_REGION", "fra1")
	doc, err := Metadata(Options{AppName: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]string{
		"application.name": "probe",
		"driver.name":      DriverName,
		"driver.version":   Version,
		"os.type":          osType(runtime.GOOS),
		"os.name":          runtime.GOOS,
		"os.architecture":  runtime.GOARCH,
		"platform":         runtime.Version() + " " + runtime.Compiler,
		"env.name":         "vercel",
		"env.region":       "fra1",
		"env.container.runtime": func() string {
			if _, err := os.Stat("/.dockerenv"); err == nil {
				return "docker"
			}
			return ""
		}(),
	}
	for path, want := range checks {
		got, _ := doc.LookupPath(path)
		if s, _ := got.StringValueOK(); s != want {
			t.Errorf("%s = %q, want %q", path, s, want)
		}
	}
}

func TestOSType(t *testing.T) {
	for goos, want := range map[string]string{"linux": "Linux", "darwin": "Darwin", "windows": "Windows", "freebsd": "FreeBSD", "illumos": "SunOS", "plan9": "plan9", "": "unknown"} {
		if got := osType(goos); got != want {
			t.Errorf("osType(%q) = %q, want %q", goos, got, want)
		}
	}
	// An unknown host still reports a type, as the spec requires.
	doc, err := buildMetadata(Options{Getenv: envOf(nil), FileExists: noFile}, host{})
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Lookup("os", "type").StringValue(); got != "unknown" {
		t.Fatalf("os.type = %q", got)
	}
}

// FuzzMetadata feeds arbitrary application names, wrapping-library fields
// and environment values: the result is an *Error or a valid document of at
// most 512 bytes.
func FuzzMetadata(f *testing.F) {
	f.Add("app", "lib", "1.0", "Lib Platform", "AWS_Lambda_java8", "us-east-2", "1024", "", "", false)
	f.Add("", "", "", "", "", "", "", "servicename", "60", true)
	f.Add(strings.Repeat("a", 128), strings.Repeat("n", 200), strings.Repeat("v", 100), strings.Repeat("é", 300), "AWS_Lambda_x", strings.Repeat("r", 600), "big", "", "", true)
	f.Add("x", "a|b", "", "", "", "", "", "", "", false)
	f.Fuzz(func(t *testing.T, app, name, version, platform, awsEnv, region, memory, kService, timeout string, docker bool) {
		vars := map[string]string{
			"AWS_EXECUTION_ENV": awsEnv, "AWS_REGION": region, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": memory,
			"K_SERVICE": kService, "FUNCTION_TIMEOUT_SEC": timeout, "FUNCTION_REGION": region, "FUNCTION_MEMORY_MB": memory,
			"VERCEL": kService, "VERCEL_REGION": region, "KUBERNETES_SERVICE_HOST": version,
		}
		exists := noFile
		if docker {
			exists = dockerFile
		}
		o := Options{AppName: app, DriverInfo: []DriverInfo{{Name: name, Version: version, Platform: platform}}, Getenv: envOf(vars), FileExists: exists}
		doc, err := buildMetadata(o, testHost)
		if err != nil {
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if len(doc) > MaxMetadataSize {
			t.Fatalf("metadata is %d bytes", len(doc))
		}
		if err := doc.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := doc.Lookup("application", "name").StringValue(); got != app {
			t.Fatalf("application.name = %q, want %q", got, app)
		}
		if _, err := AppendHello(nil, doc, o, false, nil); err != nil {
			t.Fatal(err)
		}
	})
}
