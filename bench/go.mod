module github.com/mongoscope/mongoscope/bench

go 1.25.0

require github.com/mongoscope/mongoscope v0.0.0

require go.mongodb.org/mongo-driver/v2 v2.9.3

replace github.com/mongoscope/mongoscope => ../
