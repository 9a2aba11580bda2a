package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

func TestViews(t *testing.T) {
	s := New()
	if _, err := s.CollectionOrCreate("db", "c"); err != nil {
		t.Fatal(err)
	}
	m1, m2 := doc(t, `{"$match": {"a": 1}}`), doc(t, `{"$match": {"b": 1}}`)
	steps := []struct {
		name string
		err  error
		want int32
	}{
		{"view on collection", s.CreateView("db", "v", "c", []bson.Raw{m1}), 0},
		{"view on view", s.CreateView("db", "vv", "v", []bson.Raw{m2}), 0},
		{"view exists", s.CreateView("db", "v", "c", nil), mongoerr.NamespaceExists},
		{"collection exists", s.CreateView("db", "c", "x", nil), mongoerr.NamespaceExists},
		{"collection over view", s.CreateCollection("db", "v", CollectionOptions{}), mongoerr.NamespaceExists},
		{"bad viewOn", s.CreateView("db", "x", "a$b", nil), mongoerr.InvalidNamespace},
		{"implicit create of a view", func() error { _, err := s.CollectionOrCreate("db", "v"); return err }(), codeCommandNotSupportedOnView},
		{"rename onto view", s.RenameCollection("db", "c", "db", "v", true), mongoerr.NamespaceExists},
	}
	for _, st := range steps {
		if got := code(st.err); got != st.want {
			t.Errorf("%s: code %d (%v), want %d", st.name, got, st.err, st.want)
		}
	}
	coll, p, ok, err := s.ResolveView("db", "vv")
	if err != nil || !ok || coll != "c" || len(p) != 2 || string(p[0]) != string(m1) || string(p[1]) != string(m2) {
		t.Errorf("ResolveView(vv) = %q, %v, %v, %v", coll, p, ok, err)
	}
	if _, _, ok, _ := s.ResolveView("db", "c"); ok {
		t.Error("ResolveView(c) reports a view")
	}
	var types []string
	for _, ci := range s.ListCollections("db") {
		types = append(types, ci.Name+":"+ci.Type)
	}
	if fmt.Sprint(types) != "[c:collection v:view vv:view]" {
		t.Errorf("ListCollections = %v", types)
	}
	// 20 views on views are allowed, not 21.
	prev := "c"
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("d%d", i)
		if err := s.CreateView("db", name, prev, nil); err != nil {
			t.Fatalf("view %d: %v", i, err)
		}
		prev = name
	}
	if coll, _, _, err := s.ResolveView("db", prev); err != nil || coll != "c" {
		t.Errorf("20 views: %q, %v", coll, err)
	}
	if err := s.CreateView("db", "d20", prev, nil); code(err) != codeViewDepthLimitExceeded {
		t.Errorf("21st view: %v", err)
	}
	// Cycles, through a view itself or others.
	if err := s.CreateView("db", "self", "self", nil); code(err) != codeGraphContainsCycle ||
		err.Error() == "" || !strings.Contains(err.Error(), "View cycle detected: db.self => db.self => db.self") {
		t.Errorf("self cycle: %v", err)
	}
	if err := s.ModifyView("db", "v", "vv", nil, false); code(err) != codeGraphContainsCycle ||
		!strings.Contains(err.Error(), "View cycle detected: db.v => db.v => db.vv => db.v") {
		t.Errorf("cycle through vv: %v", err)
	}
	if err := s.ModifyView("db", "v", "", []bson.Raw{m2}, true); err != nil {
		t.Fatal(err)
	}
	if _, p, _, _ := s.ResolveView("db", "v"); len(p) != 1 || string(p[0]) != string(m2) {
		t.Errorf("modified pipeline %v", p)
	}
	if err := s.ModifyView("db", "nope", "c", nil, false); code(err) != mongoerr.NamespaceNotFound {
		t.Errorf("modify a missing view: %v", err)
	}
	if !s.DropView("db", "vv") || s.DropView("db", "vv") {
		t.Error("DropView")
	}
	if !s.DropDatabase("db") || s.View("db", "v") != nil {
		t.Error("DropDatabase left the views")
	}
}
