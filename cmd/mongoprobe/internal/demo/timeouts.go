package demo

import (
	"errors"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// SlowFindBlock is how long BlockFinds blocks the primary's finds for
// mongoprobe check --timeouts.
const SlowFindBlock = 150 * time.Millisecond

// BlockFinds makes every find on the current primary wait block before it
// runs (a failCommand fail point with blockConnection), so that reads
// under tighter budgets time out; the returned function switches it off.
func (d *Demo) BlockFinds(block time.Duration) (undo func() error, err error) {
	p := d.RS.Primary()
	if p == nil {
		return nil, errors.New("demo: no primary to slow down")
	}
	err = p.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}},
			{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: block.Milliseconds()}}}})
	if err != nil {
		return nil, err
	}
	return func() error {
		return p.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}})
	}, nil
}
