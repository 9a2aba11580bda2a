package driver

import (
	"context"

	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// ModifyCollectionOptions are the collection settings ModifyCollection
// changes (the collMod command); a nil field is left as it is.
type ModifyCollectionOptions struct {
	// Validator replaces the collection's validator document.
	Validator any
	// ValidationLevel is "off", "strict" or "moderate".
	ValidationLevel *string
	// ValidationAction is "error" or "warn".
	ValidationAction *string
	// ChangeStreamPreAndPostImages is a document such as
	// bson.D{{"enabled", true}}.
	ChangeStreamPreAndPostImages any
	// ExpireAfterSeconds changes a time-series collection's expiry.
	ExpireAfterSeconds *int64
	Comment            any
}

// ModifyCollection changes the settings of the collection (or view)
// called name with collMod, under the database's write concern. opts
// must set at least one setting.
func (db *Database) ModifyCollection(ctx context.Context, name string, opts *ModifyCollectionOptions) error {
	if err := db.ready(); err != nil {
		return err
	}
	if err := checkCollectionName(name); err != nil {
		return err
	}
	if opts == nil {
		return &ArgumentError{Argument: "opts", Reason: "ModifyCollection needs at least one setting to change"}
	}
	validator, err := marshalDocValue("ModifyCollectionOptions.Validator", opts.Validator)
	if err != nil {
		return err
	}
	images, err := marshalDocValue("ModifyCollectionOptions.ChangeStreamPreAndPostImages", opts.ChangeStreamPreAndPostImages)
	if err != nil {
		return err
	}
	comment, err := marshalValue("ModifyCollectionOptions.Comment", opts.Comment)
	if err != nil {
		return err
	}
	if opts.ExpireAfterSeconds != nil && *opts.ExpireAfterSeconds < 0 {
		return &ArgumentError{Argument: "ModifyCollectionOptions.ExpireAfterSeconds", Reason: "must not be negative"}
	}
	if validator.Type == 0 && images.Type == 0 && opts.ValidationLevel == nil && opts.ValidationAction == nil && opts.ExpireAfterSeconds == nil {
		return &ArgumentError{Argument: "opts", Reason: "ModifyCollection needs at least one setting to change"}
	}
	cm := operation.CollMod{Name: name, Validator: validator, ValidationLevel: opts.ValidationLevel, ValidationAction: opts.ValidationAction,
		ChangeStreamPreAndPostImages: images, ExpireAfterSeconds: opts.ExpireAfterSeconds, Comment: comment}
	op := &operation.Op{Name: "collMod", DB: db.name, Collection: name, Command: cm.Command(),
		Selector: selection.Write(), WriteConcern: db.c.wc, Unacknowledged: !db.c.wcAck}
	_, err = db.execute(ctx, op)
	return err
}
