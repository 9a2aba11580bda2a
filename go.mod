module github.com/mongoscope/mongoscope

go 1.25

require (
	github.com/golang/snappy v1.0.0
	github.com/klauspost/compress v1.20.3
	github.com/xdg-go/stringprep v1.0.4
	golang.org/x/text v0.3.8 // indirect
)
