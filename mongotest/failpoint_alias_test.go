package mongotest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// TestFailCommandAliases checks that a failCommand fail point naming a
// command fires for every name the command is registered under, as
// mongod's Command::hasAlias makes it, and for no other command: hello
// and isMaster are two commands in mongod, isMaster and ismaster one.
func TestFailCommandAliases(t *testing.T) {
	s := NewServer(t, Options{Topology: Topology{Role: RolePrimary, SetName: "rs"}})
	c := connect(t, s, clientOpts{})
	const code = 4711 // no handler returns it, so only the fail point can
	for _, tc := range []struct {
		failName string
		fires    []string // spellings the fail point fails
		spares   []string // spellings it lets through
	}{
		{"hello", []string{"hello"}, []string{"isMaster", "ismaster"}},
		{"isMaster", []string{"isMaster", "ismaster"}, []string{"hello"}},
		{"ismaster", []string{"isMaster", "ismaster"}, []string{"hello"}},
		{"ISMASTER", nil, []string{"hello", "isMaster", "ismaster"}},
		{"buildInfo", []string{"buildInfo", "buildinfo"}, nil},
		{"buildinfo", []string{"buildInfo", "buildinfo"}, nil},
		{"findAndModify", []string{"findAndModify", "findandmodify"}, []string{"update"}},
		{"findandmodify", []string{"findAndModify", "findandmodify"}, []string{"update"}},
		{"dropIndexes", []string{"dropIndexes", "deleteIndexes"}, nil},
		{"deleteIndexes", []string{"dropIndexes", "deleteIndexes"}, nil},
		{"dbStats", []string{"dbStats", "dbstats"}, nil},
		{"dbstats", []string{"dbStats", "dbstats"}, nil},
		{"collStats", []string{"collStats", "collstats"}, nil},
		{"collstats", []string{"collStats", "collstats"}, nil},
		{"ping", []string{"ping"}, []string{"hello", "buildInfo"}},
	} {
		t.Run(tc.failName, func(t *testing.T) {
			if err := s.SetFailPoint(fp("alwaysOn", d("failCommands", bson.A{tc.failName}, "errorCode", code))); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := s.SetFailPoint(fp("off", nil)); err != nil {
					t.Fatal(err)
				}
			}()
			failed := func(name string) bool {
				t.Helper()
				_, err := c.run("test", d(name, "c"))
				var ce *cmdError
				if err != nil && !errors.As(err, &ce) {
					t.Fatalf("%s: %v", name, err)
				}
				return ce != nil && ce.Code == code
			}
			for _, n := range tc.fires {
				if !failed(n) {
					t.Errorf("fail point on %s: %s not failed", tc.failName, n)
				}
			}
			for _, n := range tc.spares {
				if failed(n) {
					t.Errorf("fail point on %s: %s failed", tc.failName, n)
				}
			}
		})
	}
}

// TestCommandAliasesShareHandler checks that aliasOf names table rows
// that run their registered name's handler, so that the fail point's
// notion of one command matches the table's.
func TestCommandAliasesShareHandler(t *testing.T) {
	for alias, name := range aliasOf {
		a, okA := commands[alias]
		n, okN := commands[name]
		if !okA || !okN {
			t.Errorf("aliasOf[%q] = %q: table rows present %v, %v", alias, name, okA, okN)
			continue
		}
		if reflect.ValueOf(a.h).Pointer() != reflect.ValueOf(n.h).Pointer() {
			t.Errorf("alias %s runs another handler than %s", alias, name)
		}
		if a.flags != n.flags {
			t.Errorf("alias %s has flags %v, %s has %v", alias, a.flags, name, n.flags)
		}
		if commandName(alias) != name || commandName(name) != name {
			t.Errorf("commandName(%q) = %q, commandName(%q) = %q", alias, commandName(alias), name, commandName(name))
		}
	}
}
