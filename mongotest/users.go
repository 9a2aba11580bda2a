package mongotest

import (
	"context"
	"slices"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// User management: createUser, updateUser, dropUser,
// dropAllUsersFromDatabase and usersInfo, over the store SCRAM
// authenticates against. Passwords are never kept, only the SCRAM keys;
// the command log drops createUser's and updateUser's bodies whole.

const (
	codeRoleNotFound      = 31
	codeUserNotFound      = 11
	codeUserAlreadyExists = 51003
)

var createUserArgs = fieldSet("pwd", "roles", "customData", "mechanisms", "digestPassword",
	"authenticationRestrictions")

// userArgs are createUser's and updateUser's options, read.
type userArgs struct {
	pwd        *string
	roles      []bson.Raw
	rolesSet   bool
	customData bson.Raw
	mechs      []string
}

func readUserArgs(r *Request, roleRequired bool) (string, userArgs, error) {
	var a userArgs
	v := r.Body.Lookup(r.Name)
	name, ok := v.StringValueOK()
	if !ok {
		return "", a, newError(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'string'", r.Name, r.Name, typeName(v.Type))
	}
	if name == "" {
		return "", a, newError(mongoerr.BadValue, "User document needs 'user' field to be non-empty")
	}
	if strings.ContainsRune(name, 0) {
		return "", a, newError(mongoerr.BadValue, "Username cannot contain NULL characters")
	}
	if r.DB == "local" && r.Name == "createUser" {
		return "", a, newError(mongoerr.BadValue, "Cannot create users in the local database")
	}
	if r.DB == "$external" {
		return "", a, newError(mongoerr.NotImplemented, "mongotest does not support users of the $external database")
	}
	err := eachArg(r, createUserArgs, func(k []byte, v bson.RawValue) error {
		switch string(k) {
		case "pwd":
			p, ok := v.StringValueOK()
			if !ok {
				return newError(mongoerr.TypeMismatch, "BSON field '%s.pwd' is the wrong type '%s', expected type 'string'", r.Name, typeName(v.Type))
			}
			if p == "" {
				return newError(mongoerr.BadValue, "Password cannot be empty")
			}
			a.pwd = &p
		case "roles":
			roles, err := readRoles(r, v)
			if err != nil {
				return err
			}
			a.roles, a.rolesSet = roles, true
		case "customData":
			d, ok := v.DocumentOK()
			if !ok {
				return newError(mongoerr.TypeMismatch, "BSON field '%s.customData' is the wrong type '%s', expected type 'object'", r.Name, typeName(v.Type))
			}
			a.customData = append(bson.Raw(nil), d...)
		case "mechanisms":
			arr, ok := v.ArrayOK()
			if !ok {
				return newError(mongoerr.TypeMismatch, "BSON field '%s.mechanisms' is the wrong type '%s', expected type 'array'", r.Name, typeName(v.Type))
			}
			it := arr.Iter()
			for it.Next() {
				m, ok := it.Value().StringValueOK()
				if !ok || (m != SCRAMSHA1 && m != SCRAMSHA256) {
					return newError(mongoerr.BadValue, "Unknown auth mechanism '%s'", m)
				}
				a.mechs = append(a.mechs, m)
			}
			if len(a.mechs) == 0 {
				return newError(mongoerr.BadValue, "mechanisms field must not be empty")
			}
		case "digestPassword":
			if b, ok := v.BooleanOK(); ok && !b {
				return newError(mongoerr.NotImplemented, "mongotest does not support digestPassword: false")
			}
		case "authenticationRestrictions":
			return newError(mongoerr.NotImplemented, "mongotest does not support authenticationRestrictions")
		}
		return nil
	})
	if err != nil {
		return "", a, err
	}
	if roleRequired && !a.rolesSet {
		return "", a, newError(40414, "BSON field '%s.roles' is missing but a required field", r.Name)
	}
	return name, a, nil
}

// readRoles turns the roles array into {role, db} documents; a bare name
// is a role of the command's database.
func readRoles(r *Request, v bson.RawValue) ([]bson.Raw, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.roles' is the wrong type '%s', expected type 'array'", r.Name, typeName(v.Type))
	}
	roles := []bson.Raw{}
	it := arr.Iter()
	for it.Next() {
		role, db := "", r.DB
		switch e := it.Value(); e.Type {
		case bson.TypeString:
			role = e.StringValue()
		case bson.TypeEmbeddedDocument:
			d := e.Document()
			rv, rok := d.Lookup("role").StringValueOK()
			dv, dok := d.Lookup("db").StringValueOK()
			if !rok || !dok {
				return nil, newError(mongoerr.BadValue, "role names must be either strings or objects with 'role' and 'db' strings")
			}
			role, db = rv, dv
		default:
			return nil, newError(mongoerr.BadValue, "role names must be either strings or objects")
		}
		if !builtinRoleExists(role, db) {
			return nil, newError(codeRoleNotFound, "Could not find role: %s@%s", role, db)
		}
		start, dst := bson.AppendDocumentStart(nil)
		dst = bson.AppendStringElement(dst, "role", role)
		dst = bson.AppendStringElement(dst, "db", db)
		dst, _ = bson.AppendDocumentEnd(dst, start)
		roles = append(roles, dst)
	}
	return roles, nil
}

// Built-in roles: those of every database, and those only the admin
// database has. mongotest has no user-defined roles (createRole).
var (
	dbRoles    = fieldSet("read", "readWrite", "dbAdmin", "dbOwner", "userAdmin")
	adminRoles = fieldSet("clusterAdmin", "clusterManager", "clusterMonitor", "hostManager", "backup",
		"restore", "readAnyDatabase", "readWriteAnyDatabase", "userAdminAnyDatabase", "dbAdminAnyDatabase",
		"root", "__system", "enableSharding", "directShardOperations", "searchCoordinator")
)

func builtinRoleExists(role, db string) bool {
	return dbRoles[role] || (db == "admin" && adminRoles[role])
}

func createUserCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	name, a, err := readUserArgs(r, true)
	if err != nil {
		return nil, err
	}
	if a.pwd == nil {
		return nil, newError(mongoerr.BadValue, "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db")
	}
	u, err := newUser(name, *a.pwd, a.mechs)
	if err != nil {
		return nil, newError(mongoerr.BadValue, "%s", err.Error())
	}
	u.roles, u.customData = a.roles, a.customData
	ref := UserRef{DB: r.DB, User: name}
	s.users.mu.Lock()
	defer s.users.mu.Unlock()
	if s.users.users[ref] != nil {
		return nil, newError(codeUserAlreadyExists, "User \"%s@%s\" already exists", name, r.DB)
	}
	if s.users.users == nil {
		s.users.users = map[UserRef]*user{}
	}
	s.users.users[ref] = u
	return nil, nil
}

func updateUserCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	name, a, err := readUserArgs(r, false)
	if err != nil {
		return nil, err
	}
	if a.pwd == nil && !a.rolesSet && a.customData == nil && a.mechs == nil {
		return nil, newError(mongoerr.BadValue, "Must specify at least one field to update in updateUser")
	}
	ref := UserRef{DB: r.DB, User: name}
	s.users.mu.Lock()
	old := s.users.users[ref]
	s.users.mu.Unlock()
	if old == nil {
		return nil, newError(codeUserNotFound, "User %s@%s not found", name, r.DB)
	}
	next := *old
	switch {
	case a.pwd != nil:
		mechs := a.mechs
		if mechs == nil {
			mechs = old.mechs
		}
		u, err := newUser(name, *a.pwd, mechs)
		if err != nil {
			return nil, newError(mongoerr.BadValue, "%s", err.Error())
		}
		next.mechs, next.creds = u.mechs, u.creds
	case a.mechs != nil:
		// Without a password the mechanisms can only shrink.
		next.creds = map[string]*scramCred{}
		next.mechs = nil
		for _, m := range a.mechs {
			c := old.creds[m]
			if c == nil {
				return nil, newError(mongoerr.BadValue, "mechanisms field must be a subset of previously set mechanisms")
			}
			next.creds[m] = c
			next.mechs = append(next.mechs, m)
		}
	}
	if a.rolesSet {
		next.roles = a.roles
	}
	if a.customData != nil {
		next.customData = a.customData
	}
	s.users.mu.Lock()
	defer s.users.mu.Unlock()
	if s.users.users[ref] != old {
		return nil, newError(codeUserNotFound, "User %s@%s not found", name, r.DB)
	}
	s.users.users[ref] = &next
	return nil, nil
}

func dropUserCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, nil); err != nil {
		return nil, err
	}
	v := r.Body.Lookup(r.Name)
	name, ok := v.StringValueOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'dropUser.dropUser' is the wrong type '%s', expected type 'string'", typeName(v.Type))
	}
	ref := UserRef{DB: r.DB, User: name}
	s.users.mu.Lock()
	defer s.users.mu.Unlock()
	if s.users.users[ref] == nil {
		return nil, newError(codeUserNotFound, "User '%s@%s' not found", name, r.DB)
	}
	delete(s.users.users, ref)
	return nil, nil
}

func dropAllUsersFromDatabaseCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, nil); err != nil {
		return nil, err
	}
	n := int32(0)
	s.users.mu.Lock()
	for ref := range s.users.users {
		if ref.DB == r.DB {
			delete(s.users.users, ref)
			n++
		}
	}
	s.users.mu.Unlock()
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "n", n)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

var usersInfoArgs = fieldSet("showCredentials", "showCustomData", "showPrivileges",
	"showAuthenticationRestrictions", "filter")

// usersInfoCmd answers usersInfo: 1 (the database's users), a name,
// {user, db}, an array of those, or {forAllDBs: true} on admin.
func usersInfoCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	showCustom := true
	err := eachArg(r, usersInfoArgs, func(k []byte, v bson.RawValue) error {
		switch string(k) {
		case "showCustomData":
			showCustom = v.Boolean()
		case "showCredentials", "showPrivileges", "showAuthenticationRestrictions", "filter":
			if v.Type == bson.TypeBoolean && !v.Boolean() {
				return nil
			}
			return newError(mongoerr.NotImplemented, "mongotest does not support the %s option of usersInfo", k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	match, err := usersInfoFilter(r)
	if err != nil {
		return nil, err
	}
	s.users.mu.Lock()
	var refs []UserRef
	found := map[UserRef]*user{}
	for ref, u := range s.users.users {
		if match(ref) {
			refs = append(refs, ref)
			found[ref] = u
		}
	}
	s.users.mu.Unlock()
	// mongod sorts by user, then db.
	slices.SortFunc(refs, func(a, b UserRef) int {
		if c := cmpStrings(a.User, b.User); c != 0 {
			return c
		}
		return cmpStrings(a.DB, b.DB)
	})
	start, dst := bson.AppendDocumentStart(nil)
	as, dst := bson.AppendArrayElementStart(dst, "users")
	for i, ref := range refs {
		u := found[ref]
		us, d2 := bson.AppendDocumentElementStart(dst, bson.ArrayKey(i))
		d2 = bson.AppendStringElement(d2, "_id", ref.DB+"."+ref.User)
		d2 = bson.AppendBinaryElement(d2, "userId", 4, u.id[:])
		d2 = bson.AppendStringElement(d2, "user", ref.User)
		d2 = bson.AppendStringElement(d2, "db", ref.DB)
		if showCustom && u.customData != nil {
			d2 = bson.AppendDocumentElement(d2, "customData", u.customData)
		}
		rs, d3 := bson.AppendArrayElementStart(d2, "roles")
		for j, role := range u.roles {
			d3 = bson.AppendDocumentElement(d3, bson.ArrayKey(j), role)
		}
		d2, _ = bson.AppendDocumentEnd(d3, rs)
		d2 = appendStrings(d2, "mechanisms", u.mechs)
		dst, _ = bson.AppendDocumentEnd(d2, us)
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// usersInfoFilter reads usersInfo's argument into a predicate.
func usersInfoFilter(r *Request) (func(UserRef) bool, error) {
	v := r.Body.Lookup("usersInfo")
	badArg := newError(mongoerr.BadValue, "User and role names must be either strings or objects")
	one := func(e bson.RawValue) (UserRef, error) {
		switch e.Type {
		case bson.TypeString:
			return UserRef{DB: r.DB, User: e.StringValue()}, nil
		case bson.TypeEmbeddedDocument:
			d := e.Document()
			u, uok := d.Lookup("user").StringValueOK()
			db, dok := d.Lookup("db").StringValueOK()
			if !uok || !dok {
				return UserRef{}, newError(mongoerr.BadValue, "Missing expected field \"user\" or \"db\"")
			}
			return UserRef{DB: db, User: u}, nil
		}
		return UserRef{}, badArg
	}
	switch {
	case v.IsNumber():
		return func(ref UserRef) bool { return ref.DB == r.DB }, nil
	case v.Type == bson.TypeEmbeddedDocument:
		if b, ok := v.Document().Lookup("forAllDBs").BooleanOK(); ok {
			if !b {
				return nil, newError(mongoerr.BadValue, "forAllDBs must be true if specified")
			}
			if r.DB != "admin" {
				return nil, newError(mongoerr.BadValue, "forAllDBs may only be specified on the admin database")
			}
			return func(UserRef) bool { return true }, nil
		}
	case v.Type == bson.TypeArray:
		want := map[UserRef]bool{}
		it := v.Array().Iter()
		for it.Next() {
			ref, err := one(it.Value())
			if err != nil {
				return nil, err
			}
			want[ref] = true
		}
		return func(ref UserRef) bool { return want[ref] }, nil
	}
	ref, err := one(v)
	if err != nil {
		return nil, err
	}
	return func(x UserRef) bool { return x == ref }, nil
}
