// Package operation runs one driver operation: it selects a server, checks
// out a connection, sends the command, hands any error to SDAM's error
// handling, and publishes the operation, selection and command events, all
// within the operation's time budget (the caller's context, bounded by the
// client's timeoutMS).
package operation
