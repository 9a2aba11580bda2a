module github.com/mongoscope/mongoscope/tools/dashgen

go 1.25.0
