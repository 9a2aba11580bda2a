package driver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
)

// connectTo connects to uri for the examples.
func connectTo(uri string) *driver.Client {
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(uri); err != nil {
		panic(err)
	}
	client, err := driver.Connect(context.Background(), opts)
	if err != nil {
		panic(err)
	}
	return client
}

func failNext(s *mongotest.Server, data bson.D) {
	err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}}, {Key: "data", Value: data}})
	if err != nil {
		panic(err)
	}
}

// A command the server refused is a *CommandError, with the server's code,
// name, message and labels; the helpers answer the usual questions.
func ExampleCommandError() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	client := connectTo(s.URI())
	defer client.Disconnect(context.Background())
	failNext(s, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 11000}, {Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}})

	_, err := client.RunCommand(context.Background(), "shop", bson.D{{Key: "insert", Value: "orders"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}})
	var ce *driver.CommandError
	if errors.As(err, &ce) {
		fmt.Println(ce.Code, ce.CodeName, ce.Labels)
	}
	var oe *driver.OperationError
	if errors.As(err, &oe) {
		fmt.Println("operation:", oe.Op)
	}
	fmt.Println("duplicate key:", driver.IsDuplicateKeyError(err))
	fmt.Println("retryable write:", driver.HasErrorLabel(err, "RetryableWriteError"))
	fmt.Println("network:", driver.IsNetworkError(err), "timeout:", driver.IsTimeout(err))
	// Output:
	// 11000 DuplicateKey [RetryableWriteError]
	// operation: insert
	// duplicate key: true
	// retryable write: true
	// network: false timeout: false
}

// A failed authentication is a *HandshakeError holding an *AuthError: the
// server's code is there, but it is not a *CommandError, which always
// means that the server refused the command itself.
func ExampleAuthError() {
	s := startServer(mongotest.Options{Auth: true})
	defer s.Close()
	if err := s.AddUser("admin", "ada", "right-Password-1"); err != nil {
		panic(err)
	}
	client := connectTo(strings.Replace(s.URI(), "mongodb://", "mongodb://ada:wrong-Password-2@", 1))
	defer client.Disconnect(context.Background())

	err := client.Ping(context.Background())
	var ae *driver.AuthError
	if errors.As(err, &ae) {
		fmt.Println(ae.Username, ae.Source, ae.Code, ae.CodeName)
	}
	var he *driver.HandshakeError
	if errors.As(err, &he) {
		fmt.Println("stage:", he.Stage)
	}
	var ce *driver.CommandError
	fmt.Println("command error:", errors.As(err, &ce))
	// Output:
	// ada admin 18 AuthenticationFailed
	// stage: auth
	// command error: false
}

// A connection the server closed is a *NetworkError; IsNetworkError finds
// it anywhere in the chain.
func ExampleNetworkError() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	client := connectTo(s.URI())
	defer client.Disconnect(context.Background())
	failNext(s, bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "closeConnection", Value: true}})

	err := client.Ping(context.Background())
	var ne *driver.NetworkError
	if errors.As(err, &ne) {
		fmt.Println(ne.Op, ne.Address == s.Addr())
	}
	fmt.Println(driver.IsNetworkError(err))
	// Output:
	// read true
	// true
}

// IsTimeout tells a deadline from other failures, whichever layer ran out
// of time: server selection, the wait for a connection, or the exchange.
func ExampleIsTimeout() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	client := connectTo(s.URI())
	defer client.Disconnect(context.Background())
	if err := client.Ping(context.Background()); err != nil {
		panic(err)
	}
	failNext(s, bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 2000}})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := client.Ping(ctx)
	fmt.Println(driver.IsTimeout(err), errors.Is(err, context.DeadlineExceeded))

	// Server selection that runs out of serverSelectionTimeoutMS.
	nowhere := connectTo("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100&connectTimeoutMS=50")
	defer nowhere.Disconnect(context.Background())
	err = nowhere.Ping(context.Background())
	var se *driver.SelectionError
	fmt.Println(driver.IsTimeout(err), errors.As(err, &se), errors.Is(err, driver.ErrServerSelectionTimeout))
	// Output:
	// true true
	// true true true
}

// Disconnect interrupts the operations still running when its context
// ends; they fail with ErrClientDisconnected.
func ExampleClient_Disconnect() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	findStarted := &startedMonitor{name: "find", ch: make(chan struct{}, 1)}
	opts := &driver.ClientOptions{Monitors: []any{findStarted}}
	if err := opts.ApplyURI(s.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(context.Background(), opts)
	if err != nil {
		panic(err)
	}
	failNext(s, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 3000}})

	done := make(chan error)
	go func() {
		_, err := client.RunCommand(context.Background(), "shop", bson.D{{Key: "find", Value: "orders"}})
		done <- err
	}()
	<-findStarted.ch // the find is running

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = client.Disconnect(ctx)
	fmt.Println("Disconnect:", errors.Is(err, context.DeadlineExceeded))
	err = <-done
	fmt.Println("find:", errors.Is(err, driver.ErrClientDisconnected))
	// Output:
	// Disconnect: true
	// find: true
}

// startedMonitor signals the start of each command with the given name.
type startedMonitor struct {
	name string
	ch   chan struct{}
}

func (m *startedMonitor) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	if e.CommandName == m.name {
		m.ch <- struct{}{}
	}
	return ctx
}
func (m *startedMonitor) CommandSucceeded(context.Context, *event.CommandSucceeded) {}
func (m *startedMonitor) CommandFailed(context.Context, *event.CommandFailed)       {}

// A reply the driver cannot use (a field missing, of the wrong type or
// with an impossible value) is a *ReplyError naming the field, inside the
// *OperationError of the command.
func ExampleReplyError() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	client := connectTo(s.URI())
	defer client.Disconnect(context.Background())
	// A scripted server that counts a negative number of documents.
	s.Handle("count", func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) {
		return bson.Marshal(bson.D{{Key: "n", Value: -3}})
	})

	_, err := client.Database("shop").Collection("orders").EstimatedDocumentCount(context.Background())
	var re *driver.ReplyError
	if errors.As(err, &re) {
		fmt.Println(re.Field, "-", re.Reason)
	}
	// Output:
	// n - -3 is negative
}
