// Package driver is the MongoDB client API: ClientOptions configures a
// client, Connect starts one (SDAM monitoring, one CMAP pool per server),
// and Client runs commands through server selection with the events of
// package event published to the monitors and the logging sink given in
// ClientOptions.
//
// # Databases, collections and cursors
//
// Client.Database and Database.Collection return handles that send
// nothing until an operation runs; they carry the read concern, write
// concern and read preference their operations use, each level
// inheriting the one above (URI, then DatabaseOptions, then
// CollectionOptions). A mistake in a name or an option comes back as an
// *ArgumentError from the handle's operations.
//
// The operations keep the names Go users know: InsertOne, InsertMany,
// Find, FindOne and the rest of the CRUD specification. Options are plain
// structs, one per operation (FindOptions, InsertManyOptions, ...),
// nil-able pointers where zero means something. Find returns a *Cursor
// (Next, TryNext, Decode, All, Close); FindOne a *SingleResult whose Err
// is ErrNoDocuments when nothing matched. The generic functions decode
// straight into a type: Decode[T] for a single result, All[T] for a
// cursor's documents and Iter[T] for a range loop.
//
// Every operation runs through one execution path (package
// driver/internal/operation): server selection, connection checkout, the
// command built by appending, the lsid of the context's explicit session
// (NewSessionContext) or of an implicit one wherever the server supports
// sessions (none on unacknowledged writes), the highest
// $clusterTime seen, the concerns and $readPreference, then the reply and
// the errors, with the operation, command, selection and pool events on
// the way. Cursors send getMore and killCursors to the server that opened
// them, with the same session, and in load-balanced mode on the same
// connection. Disconnect sends endSessions for the pooled sessions.
//
// # One options style: a plain struct
//
// ClientOptions is a struct with one exported field per setting, not a
// chain of setters or functional options. A struct can be inspected and
// printed (String redacts every secret), compared in tests with
// reflect.DeepEqual, filled from a configuration file with encoding/json
// or a YAML decoder, and validated in one place (Validate).
//
// The zero value of every field means "use the default", which each
// field's comment states. Where zero is itself a meaningful setting (a
// timeout of 0 means "no timeout", maxPoolSize=0 means "no limit", a
// boolean false) the field is a pointer, nil when unset; Ptr makes one
// from a literal:
//
//	opts := &driver.ClientOptions{
//		Hosts: []string{"db1.example.com:27017", "db2.example.com:27017"},
//		URIOptions: driver.URIOptions{
//			ReplicaSet:     "rs0",
//			MaxPoolSize:    driver.Ptr(50),
//			ConnectTimeout: driver.Ptr(5 * time.Second),
//			RetryWrites:    driver.Ptr(false),
//		},
//	}
//
// The URI options are the embedded URIOptions (connstring.URIOptions),
// which connstring.ConnString embeds too: each option is declared once,
// options set in code and options from a URI are one data model, and
// opts.MaxPoolSize reads or sets one directly.
//
// # Connection strings and precedence
//
// ApplyURI parses a connection string (package connstring) and keeps it in
// the URI field. Its hosts and options take precedence over the fields set
// in code, whatever the order of the calls. The Connection String
// specification recommends this order, from low to high: default values,
// then the client's hosts and options set in code, then the connection
// string's hosts and options, so that a deployment can change a setting
// through the URI without a code change. For mongodb+srv URIs, options from
// the DNS TXT record sit just above the defaults: the Initial DNS Seedlist
// Discovery specification lets both code and URI override them.
//
// Validate applies to the combined options the same rules that
// connstring.Parse applies to a URI, so a conflict is caught whether its
// two halves come from code, from the URI, or one from each. Resolve does
// that, performs the mongodb+srv DNS lookups, and returns the effective
// configuration.
//
// # Mistakes in a URI
//
// An invalid value in a URI (readPreference=primay) is an *OptionError
// naming the option, as the same value set in code is; LenientURI turns
// that into the specification's warn-and-ignore. A security option (tls,
// ssl, tls*, authMechanism, authSource) fails closed in both modes, and an
// unknown option is a Warning in both. Warnings go to OnWarning and, when
// the client has a logging sink, to its log at WARN level.
//
// # Errors
//
// The errors are types of this package, whose fields go doc shows. A
// mistake in a call (a nil command, an empty database name, an unknown
// read preference mode, a map command with more than one key) is an
// *ArgumentError, returned before anything is sent; bad ClientOptions are
// an *OptionError from Connect. Every later failure is an *OperationError
// naming the operation and the server, whose cause errors.As reaches: a
// *CommandError (the server refused the command), a *WriteConcernError, a
// *NetworkError, a *HandshakeError (with an *AuthError inside when
// authentication failed: an authentication failure is never a
// *CommandError), a *SelectionError, a *WaitQueueTimeoutError or a
// *PoolClearedError. IsTimeout, IsNetworkError, IsDuplicateKeyError and
// HasErrorLabel answer the usual questions. A message states each fact
// (the address, the connection, the server's code) once:
//
//	listDatabases on db1:27017: establishing connection 3: authentication failed: SCRAM-SHA-256 for user "app" on db "admin": the server rejected saslContinue: server error 18 (AuthenticationFailed): Authentication failed.
//
// # Retries
//
// A retryable read or write is retried once after a network error
// (while connecting too), a cleared pool or a retryable server error,
// unless retryReads or retryWrites is false; under timeoutMS it is retried
// until the budget runs out. The retryable reads are Find, FindOne,
// Aggregate (without $out or $merge), Distinct, CountDocuments,
// EstimatedDocumentCount, ListDatabases, ListDatabaseNames,
// ListCollections (and its Names and Specifications), Indexes().List (and
// its Names and Specifications) and SearchIndexes().List; a cursor's
// getMore and RunCommand are not. The retryable writes are InsertOne,
// InsertMany, UpdateOne, ReplaceOne, DeleteOne, FindOneAndDelete,
// FindOneAndReplace, FindOneAndUpdate and BulkWrite, each command of which
// is retryable unless it carries an UpdateMany or DeleteMany; UpdateMany,
// DeleteMany, an unacknowledged write (w: 0), Aggregate with $out or
// $merge and RunCommand are not. A write is retryable only on a server
// that supports it (a replica set member, a mongos or a load balancer
// with sessions): it then carries a session and txnNumber, kept across
// the retry, so the server applies it once. A retryable write's error
// that may be retried carries the RetryableWriteError label (HasErrorLabel).
//
// Every command is also retried when the server says it is overloaded
// (an error labelled SystemOverloadedError and RetryableError, as the
// ingress rate limiter of MongoDB 8.2 and later answers), getMore,
// updateMany and RunCommand included: up to maxAdaptiveRetries times (2
// by default; 0 turns this off), each after a backoff of
// jitter × min(10 s, base × 2^retry), the base being 100 ms or the
// server's baseBackoffMS. Reads need retryReads, writes retryWrites, and
// RunCommand both. Once an overload error has come, it also caps the
// operation's other retries. With enableOverloadRetargeting=true, the
// retry avoids the server that was overloaded. An application that
// retries on its own should count these retries in its own budget, lest
// it retry for too long (client backpressure specification).
//
// # Closing
//
// Client.Disconnect refuses new operations at once, lets those in flight
// finish until its context is done, then interrupts them (they fail with
// ErrClientDisconnected) and closes every monitor, pool and connection;
// the logging sink is closed last, when nothing can publish any more.
package driver
