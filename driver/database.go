package driver

import (
	"fmt"
	"strings"
	"time"
)

// Database is a handle on one database of the deployment, with the read
// concern, write concern and read preference its operations use. Making
// one sends nothing; it is cheap and safe for concurrent use.
type Database struct {
	client *Client
	name   string
	c      concerns
	// err is a mistake in the name or the options, returned by every
	// operation of the database and of its collections.
	err error
}

// DatabaseOptions override the client's settings for one database; a nil
// field keeps the client's.
type DatabaseOptions struct {
	ReadConcern    *ReadConcern
	WriteConcern   *WriteConcern
	ReadPreference *ReadPreference
	// Timeout is the database's timeoutMS (client-side operations
	// timeout): its operations' budget unless a collection or the
	// operation sets its own; 0 means no limit, nil keeps the client's.
	Timeout *time.Duration
}

// Database returns a handle on the database called name. A mistake in the
// name or the options is returned by the database's operations, as an
// *ArgumentError naming it.
func (c *Client) Database(name string, opts ...*DatabaseOptions) *Database {
	db := &Database{client: c, name: name, c: c.base}
	db.err = checkDatabaseName(name)
	for _, o := range opts {
		if o == nil || db.err != nil {
			continue
		}
		db.c, db.err = db.c.with("DatabaseOptions", o.ReadConcern, o.WriteConcern, o.ReadPreference)
		if db.err == nil {
			db.c, db.err = db.c.withTimeout("DatabaseOptions.Timeout", o.Timeout)
		}
	}
	return db
}

// Name returns the database's name.
func (db *Database) Name() string { return db.name }

// Client returns the client the database belongs to.
func (db *Database) Client() *Client { return db.client }

// checkDatabaseName applies the server's rules for database names: not
// empty, under 64 bytes, none of / \ . " $ space or NUL.
func checkDatabaseName(name string) error {
	switch {
	case name == "":
		return &ArgumentError{Argument: "database name", Reason: "the database name is empty"}
	case len(name) >= 64:
		return &ArgumentError{Argument: "database name", Reason: fmt.Sprintf("the database name %q is %d bytes; the limit is 63", name, len(name))}
	case strings.ContainsAny(name, "/\\. \"$\x00"):
		return &ArgumentError{Argument: "database name", Reason: fmt.Sprintf("the database name %q holds a character the server refuses (/ \\ . \" $ space or NUL)", name)}
	}
	return nil
}

// checkCollectionName applies the server's rules for collection names:
// not empty, no NUL, no "$" (but in the server's own "$cmd"-style names),
// not starting with "." or "system." for user collections is the server's
// business.
func checkCollectionName(name string) error {
	switch {
	case name == "":
		return &ArgumentError{Argument: "collection name", Reason: "the collection name is empty"}
	case strings.ContainsRune(name, 0):
		return &ArgumentError{Argument: "collection name", Reason: fmt.Sprintf("the collection name %q holds a NUL byte", name)}
	case strings.HasPrefix(name, "."):
		return &ArgumentError{Argument: "collection name", Reason: fmt.Sprintf("the collection name %q starts with a dot", name)}
	case strings.ContainsRune(name, '$') && !strings.HasPrefix(name, "$cmd") && !strings.Contains(name, "oplog.$main"):
		return &ArgumentError{Argument: "collection name", Reason: fmt.Sprintf("the collection name %q holds a $", name)}
	}
	return nil
}
