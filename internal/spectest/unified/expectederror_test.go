package unified

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func TestMatchError(t *testing.T) {
	server := &ActualError{
		Err:      errors.New("Command failed: NamespaceNotFound: ns not found"),
		HasCode:  true,
		Code:     26,
		CodeName: "NamespaceNotFound",
		Labels:   []string{"RetryableWriteError"},
		Response: mustValue(`{"ok": 0, "code": 26, "codeName": "NamespaceNotFound", "errmsg": "ns not found"}`).Document(),
	}
	client := &ActualError{Err: errors.New("connection refused"), IsClientError: true}
	timeout := &ActualError{Err: errors.New("operation timed out"), IsClientError: true, IsTimeoutError: true}
	bulk := &ActualError{
		Err:                errors.New("bulk write failed"),
		Result:             mustValue(`{"insertedCount": 2, "matchedCount": 0}`),
		WriteErrors:        map[int]bson.Raw{1: mustValue(`{"code": 11000, "message": "dup"}`).Document()},
		WriteConcernErrors: []bson.Raw{mustValue(`{"code": 64, "message": "wc"}`).Document()},
	}
	for _, c := range []struct {
		name   string
		exp    string
		actual *ActualError
		want   string
		path   string
	}{
		// "isError: ... If true, the test runner MUST assert that an error was raised."
		{name: "isError", exp: `{"isError": true}`, actual: server},
		{name: "isError, no error", exp: `{"isError": true}`, actual: &ActualError{}, want: wantMismatch, path: "expectError"},
		{name: "isError false", exp: `{"isError": false}`, actual: server, want: wantInvalid},
		// "isClientError: ... If true, the test runner MUST assert that the
		// error originates from the client ... If false, the test runner
		// MUST assert that the error does not originate from the client."
		{name: "isClientError true", exp: `{"isClientError": true}`, actual: client},
		{name: "isClientError true, server error", exp: `{"isClientError": true}`, actual: server, want: wantMismatch, path: "expectError.isClientError"},
		{name: "isClientError false", exp: `{"isClientError": false}`, actual: server},
		{name: "isClientError false, client error", exp: `{"isClientError": false}`, actual: client, want: wantMismatch},
		// "isTimeoutError: ... If true, the test runner MUST assert that the
		// error represents a timeout due to use of the timeoutMS option."
		{name: "isTimeoutError", exp: `{"isTimeoutError": true}`, actual: timeout},
		{name: "isTimeoutError false", exp: `{"isTimeoutError": false}`, actual: timeout, want: wantMismatch},
		// "errorContains: ... MUST assert that the error message contains
		// this string using a case-insensitive match."
		{name: "errorContains", exp: `{"errorContains": "NS NOT FOUND"}`, actual: server},
		{name: "errorContains absent", exp: `{"errorContains": "duplicate key"}`, actual: server, want: wantMismatch, path: "expectError.errorContains"},
		// "errorCode: ... MUST assert that the error includes a
		// server-generated response whose code field equals this value."
		{name: "errorCode", exp: `{"errorCode": 26}`, actual: server},
		{name: "errorCode long", exp: `{"errorCode": {"$numberLong": "26"}}`, actual: server},
		{name: "errorCode differs", exp: `{"errorCode": 27}`, actual: server, want: wantMismatch},
		{name: "errorCode client", exp: `{"errorCode": 26}`, actual: client, want: wantMismatch},
		// "errorCodeName: ... using a case-insensitive comparison."
		{name: "errorCodeName", exp: `{"errorCodeName": "namespacenotfound"}`, actual: server},
		{name: "errorCodeName differs", exp: `{"errorCodeName": "DuplicateKey"}`, actual: server, want: wantMismatch},
		// "errorLabelsContain: ... MUST assert that the error contains all
		// of the specified labels"
		{name: "labelsContain", exp: `{"errorLabelsContain": ["RetryableWriteError"]}`, actual: server},
		{name: "labelsContain missing", exp: `{"errorLabelsContain": ["RetryableWriteError", "TransientTransactionError"]}`, actual: server, want: wantMismatch},
		// "errorLabelsOmit: ... MUST assert that the error does not contain
		// any of the specified labels"
		{name: "labelsOmit", exp: `{"errorLabelsOmit": ["TransientTransactionError"]}`, actual: server},
		{name: "labelsOmit present", exp: `{"errorLabelsOmit": ["RetryableWriteError"]}`, actual: server, want: wantMismatch},
		// "errorResponse: ... MUST assert that the error includes a server
		// response that matches this value as a root-level document"
		{name: "errorResponse root", exp: `{"errorResponse": {"code": 26}}`, actual: server},
		{name: "errorResponse differs", exp: `{"errorResponse": {"code": 27}}`, actual: server, want: wantMismatch, path: "expectError.errorResponse.code"},
		{name: "errorResponse none", exp: `{"errorResponse": {"code": 26}}`, actual: client, want: wantMismatch},
		// "expectResult: ... this assertion SHOULD utilize the
		// $$unsetOrMatches operator."
		{name: "expectResult", exp: `{"expectResult": {"$$unsetOrMatches": {"insertedCount": 2}}}`, actual: bulk},
		{name: "expectResult unset", exp: `{"expectResult": {"$$unsetOrMatches": {"insertedCount": 2}}}`, actual: client},
		{name: "expectResult differs", exp: `{"expectResult": {"insertedCount": 3}}`, actual: bulk, want: wantMismatch, path: "expectError.expectResult.insertedCount"},
		// "writeErrors: ... MUST assert that the writeErrors match as
		// root-level documents ... MUST assert that the error does not
		// contain any additional writeErrors."
		{name: "writeErrors", exp: `{"writeErrors": {"1": {"code": 11000}}}`, actual: bulk},
		{name: "writeErrors wrong index", exp: `{"writeErrors": {"0": {"code": 11000}}}`, actual: bulk, want: wantMismatch},
		{name: "writeErrors extra", exp: `{"writeErrors": {}}`, actual: bulk, want: wantMismatch},
		// "writeConcernErrors: ... matches ... at the same index ... as a
		// root-level document ... does not contain any additional"
		{name: "writeConcernErrors", exp: `{"writeConcernErrors": [{"code": 64}]}`, actual: bulk},
		{name: "writeConcernErrors count", exp: `{"writeConcernErrors": []}`, actual: bulk, want: wantMismatch},
		{name: "writeConcernErrors differ", exp: `{"writeConcernErrors": [{"code": 65}]}`, actual: bulk, want: wantMismatch, path: "expectError.writeConcernErrors.0.code"},
		{name: "unknown field", exp: `{"errorKind": 1}`, actual: server, want: wantInvalid},
		{name: "several, last fails", exp: `{"isClientError": false, "errorCode": 26, "errorCodeName": "Other"}`, actual: server, want: wantMismatch, path: "expectError.errorCodeName"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := MatchError(mustValue(c.exp).Document(), c.actual, nil)
			var me *MismatchError
			var ie *InvalidTestError
			switch c.want {
			case wantMatch:
				if err != nil {
					t.Fatalf("MatchError(%s) = %v, want a match", c.exp, err)
				}
			case wantMismatch:
				if !errors.As(err, &me) {
					t.Fatalf("MatchError(%s) = %v, want a *MismatchError", c.exp, err)
				}
				if c.path != "" && me.Path != c.path {
					t.Fatalf("path %q, want %q (%v)", me.Path, c.path, err)
				}
			case wantInvalid:
				if !errors.As(err, &ie) {
					t.Fatalf("MatchError(%s) = %v, want an *InvalidTestError", c.exp, err)
				}
			}
		})
	}
}
