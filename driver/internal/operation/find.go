package operation

import (
	"math"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// Find is a find command, its parts already encoded; unset values are
// left out.
type Find struct {
	Collection string
	Filter     bson.Raw
	Sort       bson.RawValue
	Projection bson.RawValue
	Hint       bson.RawValue
	Skip       *int64
	// Limit: a negative one asks for a single batch of -Limit documents;
	// 0 is no limit.
	Limit *int64
	// BatchSize: a negative one asks for a single batch.
	BatchSize *int32
	// Single asks for one batch of at most Limit documents (FindOne).
	Single       bool
	Comment      bson.RawValue
	MaxTime      *time.Duration
	Max          bson.RawValue
	Min          bson.RawValue
	ReturnKey    *bool
	ShowRecordID *bool
	// Tailable and AwaitData ask for a tailable (awaitData) cursor.
	Tailable            bool
	AwaitData           bool
	NoCursorTimeout     *bool
	AllowPartialResults *bool
	AllowDiskUse        *bool
	Collation           bson.RawValue
	Let                 bson.RawValue
	// MaxAwaitTime is the getMores' maxTimeMS on a tailable awaitData
	// cursor.
	MaxAwaitTime *time.Duration
}

// Command returns the command, with the limit, batchSize and singleBatch
// the find/getMore/killCursors and CRUD specifications map the options
// to.
func (f *Find) Command() bson.Raw {
	cmd := NewCollectionCommand("find", f.Collection, len(f.Filter)+64).Doc("filter", f.Filter).
		Value("sort", f.Sort).Value("projection", f.Projection).Value("hint", f.Hint).Int64("skip", f.Skip)
	limit := f.Limit
	singleBatch := f.Single
	if limit != nil && *limit < 0 {
		l := -*limit
		limit, singleBatch = &l, true
	}
	if limit != nil && *limit == 0 {
		limit = nil
	}
	cmd.Int64("limit", limit)
	var batchSize int32 // 0: none
	if f.BatchSize != nil {
		batchSize = *f.BatchSize
		if batchSize < 0 {
			// singleBatch = limit < 0 || batchSize < 0, and batchSize
			// = abs(batchSize) when no limit (the specification's
			// mapping, a MUST).
			singleBatch = true
			if batchSize == math.MinInt32 {
				batchSize = math.MaxInt32
			} else {
				batchSize = -batchSize
			}
		}
	}
	switch {
	case singleBatch && !f.Single && limit != nil && *limit <= math.MaxInt32:
		// A negative limit: the find/getMore/killCursors specification's
		// mapping asks for the whole limit in the one batch.
		batchSize = int32(*limit)
	case !singleBatch && limit != nil && int64(batchSize) == *limit && batchSize < math.MaxInt32:
		// The CRUD specification: batchSize equal to limit would leave
		// an open cursor behind the full first batch; limit+1 closes it.
		batchSize++
	}
	if batchSize > 0 {
		cmd.Int32("batchSize", &batchSize)
	}
	cmd.True("singleBatch", singleBatch)
	cmd.Value("comment", f.Comment)
	appendMaxTime(cmd, f.MaxTime)
	cmd.Value("max", f.Max).Value("min", f.Min).Bool("returnKey", f.ReturnKey).Bool("showRecordId", f.ShowRecordID)
	cmd.True("tailable", f.Tailable).True("awaitData", f.Tailable && f.AwaitData)
	cmd.Bool("noCursorTimeout", f.NoCursorTimeout).Bool("allowPartialResults", f.AllowPartialResults).
		Bool("allowDiskUse", f.AllowDiskUse).Value("collation", f.Collation).Value("let", f.Let)
	return cmd.Build()
}

// CursorOptions are the getMore options of the command's cursor.
func (f *Find) CursorOptions() CursorOptions {
	co := CursorOptions{Tailable: f.Tailable, Comment: f.Comment}
	if f.BatchSize != nil && *f.BatchSize > 0 {
		co.BatchSize = *f.BatchSize
	}
	if f.Limit != nil && *f.Limit > 0 {
		co.Limit = *f.Limit
	}
	if f.MaxAwaitTime != nil && f.Tailable && f.AwaitData {
		co.MaxAwaitTime = *f.MaxAwaitTime
	}
	return co
}
