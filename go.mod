module github.com/mongoscope/mongoscope

go 1.25

require (
	github.com/golang/snappy v1.0.0
	github.com/klauspost/compress v1.20.3
)
