package store

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Codes of view errors that mongoerr does not name.
const (
	codeCommandNotSupportedOnView = 166
	codeOptionNotSupportedOnView  = 167
	codeViewDepthLimitExceeded    = 43
	codeGraphContainsCycle        = 5
)

// maxViewDepth is mongod's limit on views defined on views.
const maxViewDepth = 20

// View is a read-only view: the documents of ViewOn (a collection or
// another view of the same database) through Pipeline.
type View struct {
	Name     string
	ViewOn   string
	Pipeline []bson.Raw
	// Collation is the view's default collation with mongod's defaults
	// filled in; nil for simple (a view does not inherit its
	// collection's).
	Collation bson.Raw
}

// ErrIsView is the error a write to view db.name gets from mongod:
// CommandNotSupportedOnView (166).
func ErrIsView(db, name string) error {
	e := mongoerr.New(codeCommandNotSupportedOnView, "Namespace %s.%s is a view, not a collection", db, name)
	e.CodeName = "CommandNotSupportedOnView"
	return e
}

// CreateView creates the view db.name on db.viewOn. It fails with
// NamespaceExists (48) when a collection or view of that name exists and
// InvalidNamespace (73) for a bad name.
// pipeline is kept as given (copied).
func (s *Store) CreateView(db, name, viewOn string, pipeline []bson.Raw) error {
	return s.CreateViewWithCollation(db, name, viewOn, pipeline, nil)
}

// CreateViewWithCollation is CreateView for a view with a default
// collation (the filled-in spec; nil for simple). A view on a view with
// another collation fails with OptionNotSupportedOnView (167).
func (s *Store) CreateViewWithCollation(db, name, viewOn string, pipeline []bson.Raw, collation bson.Raw) error {
	if err := ValidateCollectionName(db, name); err != nil {
		return err
	}
	if err := ValidateCollectionName(db, viewOn); err != nil {
		return mongoerr.New(mongoerr.InvalidNamespace, "invalid name for 'viewOn': %s", viewOn)
	}
	v := &View{Name: name, ViewOn: viewOn, Collation: append(bson.Raw(nil), collation...)}
	if collation == nil {
		v.Collation = nil
	}
	for _, st := range pipeline {
		v.Pipeline = append(v.Pipeline, append(bson.Raw(nil), st...))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dbs[db][name] != nil {
		return mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", db, name)
	}
	if s.views[db][name] != nil {
		return mongoerr.New(mongoerr.NamespaceExists, "Namespace already exists")
	}
	if s.views == nil {
		s.views = make(map[string]map[string]*View)
	}
	if err := s.checkViewGraphLocked(db, name, viewOn); err != nil {
		return err
	}
	if err := s.checkViewCollationLocked(db, v); err != nil {
		return err
	}
	if s.views[db] == nil {
		s.views[db] = make(map[string]*View)
	}
	s.views[db][name] = v
	return nil
}

// ModifyView changes the view db.name as collMod does: viewOn when not
// "", the pipeline when setPipeline. It fails with NamespaceNotFound (26)
// when there is no such view, GraphContainsCycle (5) when the view would
// end up on itself and ViewDepthLimitExceeded (43) past 20 views.
func (s *Store) ModifyView(db, name, viewOn string, pipeline []bson.Raw, setPipeline bool) error {
	if viewOn != "" {
		if err := ValidateCollectionName(db, viewOn); err != nil {
			return mongoerr.New(mongoerr.InvalidNamespace, "invalid name for 'viewOn': %s", viewOn)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.views[db][name]
	if old == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "cannot modify missing view %s.%s", db, name)
	}
	v := &View{Name: name, ViewOn: old.ViewOn, Pipeline: old.Pipeline, Collation: old.Collation}
	if viewOn != "" {
		v.ViewOn = viewOn
	}
	if setPipeline {
		v.Pipeline = nil
		for _, st := range pipeline {
			v.Pipeline = append(v.Pipeline, append(bson.Raw(nil), st...))
		}
	}
	if err := s.checkViewGraphLocked(db, name, v.ViewOn); err != nil {
		return err
	}
	if err := s.checkViewCollationLocked(db, v); err != nil {
		return err
	}
	s.views[db][name] = v
	return nil
}

// checkViewGraphLocked checks that a view db.name on viewOn neither
// reaches itself nor stacks more than 20 views, with mongod's errors; the
// cycle message lists the namespaces as mongod's view graph walks them
// back.
func (s *Store) checkViewGraphLocked(db, name, viewOn string) error {
	path := []string{name}
	for cur := viewOn; ; {
		path = append(path, cur)
		if cur == name {
			msg := "View cycle detected: " + db + "." + name
			for i := len(path) - 1; i >= 0; i-- {
				msg += " => " + db + "." + path[i]
			}
			e := mongoerr.New(codeGraphContainsCycle, "%s", msg)
			e.CodeName = "GraphContainsCycle"
			return e
		}
		next := s.views[db][cur]
		if next == nil {
			return nil
		}
		if len(path) > maxViewDepth {
			e := mongoerr.New(codeViewDepthLimitExceeded, "View depth too deep or view cycle detected. Maximum depth is %d", maxViewDepth)
			e.CodeName = "ViewDepthLimitExceeded"
			return e
		}
		cur = next.ViewOn
	}
}

// checkViewCollationLocked refuses a view on a view of another
// collation, as mongod does.
func (s *Store) checkViewCollationLocked(db string, v *View) error {
	on := s.views[db][v.ViewOn]
	if on == nil || string(on.Collation) == string(v.Collation) {
		return nil
	}
	e := mongoerr.New(codeOptionNotSupportedOnView, "View %s.%s has conflicting collation with view %s.%s", db, v.Name, db, on.Name)
	e.CodeName = "OptionNotSupportedOnView"
	return e
}

// View returns the view db.name, or nil when there is none.
func (s *Store) View(db, name string) *View {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.views[db][name]
}

// DropView drops the view db.name and reports whether it existed.
func (s *Store) DropView(db, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.views[db][name] == nil {
		return false
	}
	delete(s.views[db], name)
	if len(s.views[db]) == 0 {
		delete(s.views, db)
	}
	return true
}

// ResolveView follows db.name through views to the collection underneath
// and returns its name with the pipeline to run on it (the innermost
// view's stages first). ok is false when name is not a view. A chain
// deeper than mongod's limit (20) fails with ViewDepthLimitExceeded (43).
func (s *Store) ResolveView(db, name string) (coll string, pipeline []bson.Raw, ok bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	coll = name
	for depth := 0; ; depth++ {
		v := s.views[db][coll]
		if v == nil {
			return coll, pipeline, depth > 0, nil
		}
		if depth >= maxViewDepth {
			e := mongoerr.New(codeViewDepthLimitExceeded, "View depth too deep or view cycle detected. Maximum depth is %d", maxViewDepth)
			e.CodeName = "ViewDepthLimitExceeded"
			return "", nil, true, e
		}
		pipeline = append(append([]bson.Raw(nil), v.Pipeline...), pipeline...)
		coll = v.ViewOn
	}
}

// viewInfo returns listCollections' entry for v.
func viewInfo(v *View) CollectionInfo {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "viewOn", v.ViewOn)
	as, b := bson.AppendArrayElementStart(b, "pipeline")
	for i, st := range v.Pipeline {
		b = bson.AppendDocumentElement(b, bson.ArrayKey(i), st)
	}
	b, _ = bson.AppendDocumentEnd(b, as)
	if v.Collation != nil {
		b = bson.AppendDocumentElement(b, "collation", v.Collation)
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return CollectionInfo{Name: v.Name, Type: "view", Options: b, ReadOnly: true}
}
