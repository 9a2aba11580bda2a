package store

import (
	"strings"

	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Name limits as mongod enforces them on Linux.
const (
	maxDBNameLen = 63  // database names must be shorter than 64 bytes
	maxNSLen     = 255 // "db.collection" in bytes
)

// ValidateDBName reports whether name may name a database, with mongod's
// InvalidNamespace (73) error when not.
func ValidateDBName(name string) error {
	if name == "" {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid database name: ''")
	}
	if len(name) > maxDBNameLen {
		return mongoerr.New(mongoerr.InvalidNamespace, "db name is too long: %q (max %d bytes)", name, maxDBNameLen)
	}
	if i := strings.IndexAny(name, "/\\. \"$\x00"); i >= 0 {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid database name: %q (character %q at byte %d is not allowed)", name, name[i], i)
	}
	return nil
}

// allowedSystem are the system collections a user may create.
var allowedSystem = map[string]bool{
	"system.js": true, "system.profile": true, "system.views": true,
}

// ValidateCollectionName reports whether db.name may name a collection,
// with mongod's InvalidNamespace (73) error when not.
func ValidateCollectionName(db, name string) error {
	if err := ValidateDBName(db); err != nil {
		return err
	}
	switch {
	case name == "":
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.'", db)
	case strings.IndexByte(name, 0) >= 0:
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.%s': collection names may not contain a null character", db, strings.ReplaceAll(name, "\x00", `\0`))
	case strings.IndexByte(name, '$') >= 0:
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.%s': collection names may not contain '$'", db, name)
	case name[0] == '.':
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.%s': collection names may not start with '.'", db, name)
	case strings.HasPrefix(name, "system.") && !allowedSystem[name]:
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid system namespace: %s.%s", db, name)
	case len(db)+1+len(name) > maxNSLen:
		return mongoerr.New(mongoerr.InvalidNamespace, "Fully qualified namespace is too long. Namespace: %s.%s Max: %d", db, name, maxNSLen)
	}
	return nil
}
