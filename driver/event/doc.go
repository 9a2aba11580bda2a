// Package event defines the driver's typed events (operations, commands,
// connection pools, topology discovery, server selection and retries) and
// the monitor interfaces that receive them. [ServerErrorCode] and
// [IsNetworkError] classify the errors events carry without the driver's
// error types.
//
// Hooks take the caller's context. The operation and command start hooks
// return a context that the driver passes on to everything the operation
// does and to the matching end hook, so a tracing monitor can nest command
// spans under the operation span without globals. A [Dispatcher] fans each
// event out to any number of monitors; with none attached its checks
// ([Dispatcher.Pool] and friends) let the driver skip building events, so
// unmonitored events cost nothing.
package event
