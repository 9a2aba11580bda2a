package unified

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
)

// The operations of cursor entities (FindCursor and CommandCursor),
// saved by createFindCursor and createCommandCursor.

func init() {
	register("cursor", "iterateUntilDocumentOrError", cursorIterateUntilDocumentOrError)
	register("cursor", "iterateOnce", cursorIterateOnce)
	register("cursor", "close", cursorClose)
}

func cursorIterateUntilDocumentOrError(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	if err := argKeys(args); err != nil {
		return result{}, err
	}
	doc, err := obj.(*cursorEntity).next(ctx)
	if err != nil || doc == nil {
		return result{}, err
	}
	return result{v: docValue(doc)}, nil
}

func cursorIterateOnce(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	if err := argKeys(args); err != nil {
		return result{}, err
	}
	doc, ok, err := obj.(*cursorEntity).tryNext(ctx)
	if err != nil || !ok {
		return result{}, err
	}
	return result{v: docValue(doc)}, nil
}

// cursorClose closes the cursor; the format asks runners to suppress its
// errors.
func cursorClose(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	if err := argKeys(args); err != nil {
		return result{}, err
	}
	obj.(*cursorEntity).closeWith(ctx)
	return result{}, nil
}
