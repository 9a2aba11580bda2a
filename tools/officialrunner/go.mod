module github.com/mongoscope/mongoscope/tools/officialrunner

go 1.25.0

replace github.com/mongoscope/mongoscope => ../..

require github.com/mongoscope/mongoscope v0.0.0-00010101000000-000000000000

require (
	github.com/golang/snappy v1.0.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	golang.org/x/text v0.28.0 // indirect
)
