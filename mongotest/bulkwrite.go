package mongotest

import (
	"context"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// bulkWrite (mongod 8.0, admin only) runs inserts, updates and deletes on
// any namespaces in one command. Each op runs as a one-statement insert,
// update or delete on its namespace, so it behaves exactly as those
// commands do (validation, collation, let, upserts); the replies become
// bulkWrite's per-op items, returned through a cursor on
// admin.$cmd.bulkWrite, with the summary counts beside it.

var bulkWriteArgs = fieldSet("ops", "nsInfo", "ordered", "bypassDocumentValidation", "let",
	"errorsOnly", "cursor", "stmtId", "stmtIds")

// bulkOpArgs are the fields each kind of op may have.
var bulkOpArgs = map[string]map[string]bool{
	"insert": fieldSet("insert", "document"),
	"update": fieldSet("update", "filter", "updateMods", "multi", "upsert", "arrayFilters", "hint", "collation", "sort", "upsertSupplied", "constants"),
	"delete": fieldSet("delete", "filter", "multi", "hint", "collation"),
}

func bulkWriteCmd(ctx context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, bulkWriteArgs); err != nil {
		return nil, err
	}
	ops, err := docsArray(r.Body, "ops", "bulkWrite")
	if err != nil {
		return nil, err
	}
	nsInfo, err := docsArray(r.Body, "nsInfo", "bulkWrite")
	if err != nil {
		return nil, err
	}
	namespaces := make([][2]string, len(nsInfo))
	for i, ni := range nsInfo {
		if err := checkSubArgs(ni, "bulkWrite.nsInfo", fieldSet("ns", "collectionUUID", "encryptionInformation", "isTimeseriesNamespace")); err != nil {
			return nil, err
		}
		nsv, ok := ni.Lookup("ns").StringValueOK()
		if !ok {
			return nil, newError(40414, "BSON field 'bulkWrite.nsInfo.ns' is missing but a required field")
		}
		db, coll, ok := strings.Cut(nsv, ".")
		if !ok || db == "" || coll == "" {
			return nil, newError(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", nsv)
		}
		for _, k := range []string{"collectionUUID", "encryptionInformation", "isTimeseriesNamespace"} {
			if _, err := ni.LookupErr(k); err == nil {
				return nil, newError(mongoerr.NotImplemented, "mongotest does not support %s in bulkWrite's nsInfo", k)
			}
		}
		namespaces[i] = [2]string{db, coll}
	}
	ordered := true
	if _, e := r.Body.LookupErr("ordered"); e == nil {
		if ordered, err = boolArg(r.Body, "ordered", r.Name); err != nil {
			return nil, err
		}
	}
	errorsOnly, err := boolArg(r.Body, "errorsOnly", r.Name)
	if err != nil {
		return nil, err
	}
	batchSize, err := cursorOptions(r.Body, r.Name)
	if err != nil {
		return nil, err
	}
	// Every op is checked before any runs, as mongod's parser does.
	type bulkOp struct {
		kind     string
		db, coll string
		args     bson.Raw
	}
	parsed := make([]bulkOp, len(ops))
	for i, op := range ops {
		first, err := op.Index(0)
		if err != nil {
			return nil, newError(mongoerr.FailedToParse, "BulkWrite ops entry %d is empty", i)
		}
		kind := first.Key()
		known, ok := bulkOpArgs[kind]
		if !ok {
			return nil, newError(mongoerr.FailedToParse, "Unrecognized bulkWrite op type: %s", kind)
		}
		if err := checkSubArgs(op, "bulkWrite.ops."+kind, known); err != nil {
			return nil, err
		}
		idx, ok := first.Value().AsInt64OK()
		if !ok || !first.Value().IsNumber() {
			return nil, newError(mongoerr.TypeMismatch, "BSON field 'bulkWrite.ops.%s' is the wrong type '%s', expected type 'int'", kind, typeName(first.Value().Type))
		}
		if idx < 0 || idx >= int64(len(namespaces)) {
			return nil, newError(mongoerr.BadValue, "BulkWrite ops entry %d has an invalid nsInfo index.", i)
		}
		parsed[i] = bulkOp{kind: kind, db: namespaces[idx][0], coll: namespaces[idx][1], args: op}
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	rt, err := s.beginRetryable(r)
	defer rt.end()
	if err != nil {
		return nil, err
	}
	var (
		items                                                    []bson.Raw
		nErrors, nInserted, nMatched, nModified, nUpserted, nDel int64
	)
	for i, op := range parsed {
		res, done := rt.done(i)
		var itemErr bson.Raw
		if !done {
			var sub bson.D
			switch op.kind {
			case "insert":
				sub = bsonD("insert", op.coll, "documents", bson.A{op.args.Lookup("document")})
			case "update":
				stmt := bsonD("q", op.args.Lookup("filter"), "u", op.args.Lookup("updateMods"))
				for _, k := range []string{"multi", "upsert", "arrayFilters", "hint", "collation", "sort", "upsertSupplied"} {
					if v, err := op.args.LookupErr(k); err == nil {
						stmt = append(stmt, bson.E{Key: k, Value: v})
					}
				}
				if _, err := op.args.LookupErr("constants"); err == nil {
					return nil, newError(mongoerr.NotImplemented, "mongotest does not support constants in bulkWrite")
				}
				sub = bsonD("update", op.coll, "updates", bson.A{stmt})
			case "delete":
				limit := 1
				if multi, _ := op.args.Lookup("multi").BooleanOK(); multi {
					limit = 0
				}
				stmt := bsonD("q", op.args.Lookup("filter"), "limit", limit)
				for _, k := range []string{"hint", "collation"} {
					if v, err := op.args.LookupErr(k); err == nil {
						stmt = append(stmt, bson.E{Key: k, Value: v})
					}
				}
				sub = bsonD("delete", op.coll, "deletes", bson.A{stmt})
			}
			for _, k := range []string{"bypassDocumentValidation", "let"} {
				if op.kind == "insert" && k == "let" {
					continue
				}
				if v, err := r.Body.LookupErr(k); err == nil {
					sub = append(sub, bson.E{Key: k, Value: v})
				}
			}
			sub = append(sub, bson.E{Key: "$db", Value: op.db})
			body, err := bson.Marshal(sub)
			if err != nil {
				return nil, newError(mongoerr.BadValue, "bulkWrite op %d: %v", i, err)
			}
			subReq := &Request{DB: op.db, Name: op.kind, Body: body, Conn: r.Conn}
			var reply bson.Raw
			switch op.kind {
			case "insert":
				reply, err = insertCmd(ctx, s, subReq)
			case "update":
				reply, err = updateCmd(ctx, s, subReq)
			default:
				reply, err = deleteCmd(ctx, s, subReq)
			}
			switch {
			case err != nil:
				itemErr = bulkErrorItem(i, err, nil)
			default:
				if we, ok := reply.Lookup("writeErrors").ArrayOK(); ok && len(we) > 5 {
					first, _ := we.Index(0)
					itemErr = bulkErrorItem(i, nil, first.Value().Document())
				} else {
					res = stmtResult{n: int64(reply.Lookup("n").Int32()), nModified: int64(reply.Lookup("nModified").Int32())}
					if up, ok := reply.Lookup("upserted").ArrayOK(); ok && len(up) > 5 {
						first, _ := up.Index(0)
						res.upserted = first.Value().Document().Lookup("_id")
					}
					rt.record(i, res)
				}
			}
		}
		if itemErr != nil {
			nErrors++
			items = append(items, itemErr)
			if ordered {
				break
			}
			continue
		}
		start, b := bson.AppendDocumentStart(nil)
		b = bson.AppendDoubleElement(b, "ok", 1)
		b = bson.AppendInt32Element(b, "idx", int32(i))
		b = bson.AppendInt32Element(b, "n", int32(res.n))
		switch op.kind {
		case "insert":
			nInserted += res.n
		case "update":
			matched := res.n
			if res.upserted.Type != 0 {
				matched--
				nUpserted++
			}
			nMatched += matched
			nModified += res.nModified
			b = bson.AppendInt32Element(b, "nModified", int32(res.nModified))
			if res.upserted.Type != 0 {
				us, ub := bson.AppendDocumentElementStart(b, "upserted")
				ub = bson.AppendValueElement(ub, "_id", res.upserted)
				b, _ = bson.AppendDocumentEnd(ub, us)
			}
		case "delete":
			nDel += res.n
		}
		item, _ := bson.AppendDocumentEnd(b, start)
		if !errorsOnly {
			items = append(items, item)
		}
	}
	reply, err := s.firstBatch(&cursor{ns: "admin.$cmd.bulkWrite", docs: items}, batchSize, false)
	if err != nil {
		return nil, err
	}
	start, b := bson.AppendDocumentStart(nil)
	b = append(b, reply[4:len(reply)-1]...)
	b = bson.AppendInt32Element(b, "nErrors", int32(nErrors))
	b = bson.AppendInt32Element(b, "nInserted", int32(nInserted))
	b = bson.AppendInt32Element(b, "nMatched", int32(nMatched))
	b = bson.AppendInt32Element(b, "nModified", int32(nModified))
	b = bson.AppendInt32Element(b, "nUpserted", int32(nUpserted))
	b = bson.AppendInt32Element(b, "nDeleted", int32(nDel))
	out, _ := bson.AppendDocumentEnd(b, start)
	return out, nil
}

// bulkErrorItem is the reply item of op idx that failed with err (a
// command error of its one-statement command) or with writeError (its
// write error, whose fields besides index it keeps).
func bulkErrorItem(idx int, err error, writeError bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendDoubleElement(b, "ok", 0)
	b = bson.AppendInt32Element(b, "idx", int32(idx))
	if err != nil {
		e := mongoerr.As(err)
		b = bson.AppendInt32Element(b, "code", e.Code)
		b = bson.AppendStringElement(b, "codeName", e.CodeName)
		b = bson.AppendStringElement(b, "errmsg", e.Message)
		b = appendDupKeyInfo(b, err)
		b = appendErrInfo(b, err)
	} else {
		code := writeError.Lookup("code").Int32()
		b = bson.AppendInt32Element(b, "code", code)
		name := mongoerr.CodeName(code)
		if n, ok := extraCodeNames[code]; ok {
			name = n
		}
		b = bson.AppendStringElement(b, "codeName", name)
		it := writeError.Iter()
		for it.Next() {
			if k := it.Key(); k != "index" && k != "code" {
				b = append(b, it.Element()...)
			}
		}
	}
	b = bson.AppendInt32Element(b, "n", 0)
	out, _ := bson.AppendDocumentEnd(b, start)
	return out
}

// bsonD builds a bson.D from alternating keys and values.
func bsonD(kv ...any) bson.D {
	out := make(bson.D, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return out
}
