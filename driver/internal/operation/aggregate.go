package operation

import (
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// PipelineShape is what an aggregate's command and cursor depend on in
// its pipeline's stages.
type PipelineShape struct {
	// Write: the last stage is $out or $merge.
	Write bool
	// ChangeStream: the first stage is $changeStream, which opens a
	// tailable awaitData cursor.
	ChangeStream bool
}

// ShapeOf reads the first and last stage names of an encoded pipeline (an
// array of documents).
func ShapeOf(pipeline bson.Raw) PipelineShape {
	first, last := "", ""
	it := pipeline.Iter()
	for i := 0; it.Next(); i++ {
		d, ok := it.Value().DocumentOK()
		if !ok {
			continue
		}
		name := ""
		if st := d.Iter(); st.Next() {
			name = st.Key()
		}
		if i == 0 {
			first = name
		}
		last = name
	}
	return PipelineShape{Write: last == "$out" || last == "$merge", ChangeStream: first == "$changeStream"}
}

// Aggregate is an aggregate command, its parts already encoded; an unset
// RawValue or a nil pointer is left out.
type Aggregate struct {
	// Target is the collection's name, or 1 for a database aggregation.
	Target bson.RawValue
	// Pipeline is the array of stages.
	Pipeline                 bson.Raw
	BatchSize                *int32
	AllowDiskUse             *bool
	BypassDocumentValidation *bool
	Collation                bson.RawValue
	MaxTime                  *time.Duration
	Comment                  bson.RawValue
	Hint                     bson.RawValue
	Let                      bson.RawValue

	shape    PipelineShape
	shapeSet bool
}

// Shape returns the pipeline's shape.
func (a *Aggregate) Shape() PipelineShape {
	if !a.shapeSet {
		a.shape, a.shapeSet = ShapeOf(a.Pipeline), true
	}
	return a.shape
}

// Command returns the command.
func (a *Aggregate) Command() bson.Raw {
	shape := a.Shape()
	// cursor: {batchSize: n}; a write stage gets an empty cursor document
	// (the CRUD specification: a batch size of 0 would stop it).
	st, cur := bson.AppendDocumentStart(make([]byte, 0, 24))
	if a.BatchSize != nil && !shape.Write {
		cur = bson.AppendInt32Element(cur, "batchSize", *a.BatchSize)
	}
	cur, _ = bson.AppendDocumentEnd(cur, st)

	cmd := NewCommand("aggregate", a.Target, len(a.Pipeline)+64).
		Value("pipeline", bson.RawValue{Type: bson.TypeArray, Value: a.Pipeline}).Doc("cursor", cur).
		Bool("allowDiskUse", a.AllowDiskUse)
	cmd.Bool("bypassDocumentValidation", a.BypassDocumentValidation)
	cmd.Value("collation", a.Collation)
	appendMaxTime(cmd, a.MaxTime)
	cmd.Value("comment", a.Comment).Value("hint", a.Hint).Value("let", a.Let)
	return cmd.Build()
}

// CursorOptions are the getMore options of the aggregate's cursor:
// maxAwaitTime applies to a change stream's.
func (a *Aggregate) CursorOptions(maxAwaitTime *time.Duration) CursorOptions {
	shape := a.Shape()
	co := CursorOptions{Tailable: shape.ChangeStream, Comment: a.Comment}
	if a.BatchSize != nil && !shape.Write {
		co.BatchSize = *a.BatchSize
	}
	if maxAwaitTime != nil {
		co.MaxAwaitTime = *maxAwaitTime
	}
	return co
}

// WriteStageReadPref is the read preference a pipeline with $out or
// $merge runs under (the CRUD specification's "Read preferences and
// server selection"): rp, unless a server in td is older than 5.0 (wire
// version 13), which runs such a pipeline only on the primary. A load
// balancer is taken to front 5.0+ servers, and with no server known yet
// rp stands.
func WriteStageReadPref(td description.TopologyDescription, rp selection.ReadPref) selection.ReadPref {
	if rp.Mode == selection.Primary {
		return rp
	}
	if td.Type == description.LoadBalanced {
		return rp
	}
	for i := range td.Servers {
		s := &td.Servers[i]
		if s.Type == description.Unknown || s.Type == description.PossiblePrimary {
			continue
		}
		if s.MaxWireVersion < 13 {
			return selection.ReadPref{Mode: selection.Primary}
		}
	}
	return rp
}

// appendMaxTime appends maxTimeMS for a positive d (a non-positive one is
// the server's default, no limit).
func appendMaxTime(cmd *Command, d *time.Duration) {
	if d != nil && *d > 0 {
		ms := d.Milliseconds()
		cmd.Int64("maxTimeMS", &ms)
	}
}
