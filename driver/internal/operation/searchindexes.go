package operation

import (
	"github.com/mongoscope/mongoscope/bson"
)

// SearchIndexSpec is one index of a createSearchIndexes command.
type SearchIndexSpec struct {
	// Definition is a document.
	Definition bson.RawValue
	Name       *string
	Type       *string
}

// Encode returns the index's document {definition, name, type}.
func (s *SearchIndexSpec) Encode() bson.Raw {
	c := NewCommand("definition", s.Definition, 32)
	if s.Name != nil {
		c.Value("name", StringValue(*s.Name))
	}
	if s.Type != nil {
		c.Value("type", StringValue(*s.Type))
	}
	return c.Build()
}

// CreateSearchIndexesCommand returns {createSearchIndexes: collection,
// indexes}.
func CreateSearchIndexesCommand(collection string, indexes []bson.Raw) bson.Raw {
	return NewCollectionCommand("createSearchIndexes", collection, 32).Array("indexes", indexes).Build()
}

// ReadCreatedSearchIndexes reads the names of a createSearchIndexes
// reply, {indexesCreated: [{id, name}, ...]} (never nil); a malformed one
// is a *ReplyError.
func ReadCreatedSearchIndexes(body bson.Raw) ([]string, error) {
	names := []string{}
	err := EachOf(body, "indexesCreated", func(path string, d bson.Raw) error {
		n, ok := d.Lookup("name").StringValueOK()
		if !ok {
			return &ReplyError{Field: path + ".name", Reason: "missing or not a string"}
		}
		names = append(names, n)
		return nil
	})
	return names, err
}

// UpdateSearchIndexCommand returns {updateSearchIndex: collection, name,
// definition}.
func UpdateSearchIndexCommand(collection, name string, definition bson.Raw) bson.Raw {
	return NewCollectionCommand("updateSearchIndex", collection, len(definition)+len(name)+16).
		Value("name", StringValue(name)).Doc("definition", definition).Build()
}

// DropSearchIndexCommand returns {dropSearchIndex: collection, name}.
func DropSearchIndexCommand(collection, name string) bson.Raw {
	return NewCollectionCommand("dropSearchIndex", collection, len(name)+16).Value("name", StringValue(name)).Build()
}

// ListSearchIndexesStage returns the pipeline stage {$listSearchIndexes:
// {name}} (every index when name is nil).
func ListSearchIndexesStage(name *string) bson.Raw {
	st, stage := bson.AppendDocumentStart(nil)
	ss, stage := bson.AppendDocumentElementStart(stage, "$listSearchIndexes")
	if name != nil {
		stage = bson.AppendStringElement(stage, "name", *name)
	}
	stage, _ = bson.AppendDocumentEnd(stage, ss)
	stage, _ = bson.AppendDocumentEnd(stage, st)
	return stage
}

// CommandName returns the name of cmd, its first key ("" for an empty
// document).
func CommandName(cmd bson.Raw) string {
	if it := cmd.Iter(); it.Next() {
		return it.Key()
	}
	return ""
}
