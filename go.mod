module github.com/mongoscope/mongoscope

go 1.25

require (
	github.com/golang/snappy v1.0.0
	github.com/klauspost/compress v1.20.3
	github.com/lmittmann/tint v1.2.1
	github.com/xdg-go/stringprep v1.0.4
	go.opentelemetry.io/otel/trace v1.38.0
	golang.org/x/text v0.3.8
)

require (
	go.opentelemetry.io/otel v1.38.0 // indirect
)
