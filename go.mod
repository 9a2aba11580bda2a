module github.com/mongoscope/mongoscope

go 1.25
