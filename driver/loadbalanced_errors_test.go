package driver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// lbFailPoint sets a failCommand fail point on srv: times 0 means
// alwaysOn.
func lbFailPoint(t *testing.T, srv *mongotest.Server, times int, data bson.D) {
	t.Helper()
	var mode any = "alwaysOn"
	if times > 0 {
		mode = adoc("times", times)
	}
	if err := srv.SetFailPoint(adoc("configureFailPoint", "failCommand", "mode", mode, "data", data)); err != nil {
		t.Fatal(err)
	}
}

// poolRecorder keeps the CMAP events but the checkout starts.
func poolRecorder() *eventtest.Recorder {
	return &eventtest.Recorder{Keep: func(e any) bool {
		switch e.(type) {
		case *event.ConnectionCheckOutStarted, *event.PoolCreated, *event.PoolReady:
			return false
		case event.PoolEvent:
			return true
		}
		return false
	}}
}

// The load-balancers spec's SDAM error handling ("stale errors are
// ignored"): a network error on a connection of a generation older than
// its service's current one clears nothing, so the second cursor's failed
// getMore gives no second PoolCleared.
func TestLoadBalancedStaleErrorsIgnored(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleLoadBalanced}})
	seeder := dial(t, srv.URI(), nil)
	seed(t, seeder.Database("lb").Collection("items"), 3)

	rec := poolRecorder()
	c := dial(t, srv.URI()+"&retryReads=false", &driver.ClientOptions{Monitors: []any{rec}})
	coll := c.Database("lb").Collection("items")
	ctx := testCtx(t)
	lbFailPoint(t, srv, 2, adoc("failCommands", bson.A{"getMore"}, "closeConnection", true))
	var curs []*driver.Cursor
	for range 2 {
		cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
		if err != nil {
			t.Fatal(err)
		}
		curs = append(curs, cur)
	}
	for i, cur := range curs {
		n := 0
		for cur.Next(ctx) {
			n++
		}
		if n != 2 || cur.Err() == nil {
			t.Fatalf("cursor %d: %d documents, error %v; want 2 and the getMore's network error", i, n, cur.Err())
		}
		if err := cur.Close(ctx); err != nil {
			t.Fatalf("cursor %d: Close: %v", i, err)
		}
	}
	want := []string{
		"ConnectionCreated", "ConnectionReady", "ConnectionCheckedOut",
		"ConnectionCreated", "ConnectionReady", "ConnectionCheckedOut",
		"PoolCleared", "ConnectionCheckedIn", "ConnectionClosed",
		"ConnectionCheckedIn", "ConnectionClosed",
	}
	if got := rec.Names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("CMAP events\n got %v\nwant %v", got, want)
	}
}

// The load-balancers spec's SDAM error handling: an error during
// authentication (after the hello named the service) clears that
// service's connections, before the failed connection is closed; an error
// during the initial hello clears nothing.
func TestLoadBalancedEstablishmentErrors(t *testing.T) {
	const app = "lbSDAMErrorTestClient"
	for _, tc := range []struct {
		name string
		fail bson.D
		want []string
	}{
		{"errors during authentication are processed",
			adoc("failCommands", bson.A{"saslContinue"}, "closeConnection", true, "appName", app),
			[]string{"ConnectionCreated", "PoolCleared", "ConnectionClosed", "ConnectionCheckOutFailed"}},
		{"errors during the initial connection hello are ignored",
			adoc("failCommands", bson.A{"isMaster", "hello"}, "errorCode", 11600, "appName", app),
			[]string{"ConnectionCreated", "ConnectionClosed", "ConnectionCheckOutFailed"}},
		{"network errors during the initial connection hello are ignored",
			adoc("failCommands", bson.A{"isMaster", "hello"}, "closeConnection", true, "appName", app),
			[]string{"ConnectionCreated", "ConnectionClosed", "ConnectionCheckOutFailed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{Auth: true, Topology: mongotest.Topology{Role: mongotest.RoleLoadBalanced}})
			const password = "lb-Secret-1"
			if err := srv.AddUser("admin", "ada", password); err != nil {
				t.Fatal(err)
			}
			uri := strings.Replace(srv.URI(), "mongodb://", "mongodb://ada:"+password+"@", 1) + "&appname=" + app + "&retryWrites=false"
			rec := poolRecorder()
			c := dial(t, uri, &driver.ClientOptions{Monitors: []any{rec}})
			lbFailPoint(t, srv, 1, tc.fail)
			_, err := c.Database("lb").Collection("items").InsertOne(testCtx(t), bson.D{{Key: "x", Value: 1}})
			if err == nil {
				t.Fatal("insert succeeded")
			}
			if got := rec.Names(); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("CMAP events\n got %v\nwant %v", got, tc.want)
			}
			for _, e := range eventtest.Of[*event.PoolCleared](rec) {
				if e.ServiceID == nil {
					t.Errorf("PoolCleared without serviceId: %+v", e)
				}
			}
			for _, l := range []string{"SystemOverloadedError", "RetryableError"} {
				if strings.Contains(tc.name, "authentication") && driver.HasErrorLabel(err, l) {
					t.Errorf("an authentication error got the backpressure label %s: %v", l, err)
				}
			}
			// The pool still serves: the next insert succeeds.
			if _, err := c.Database("lb").Collection("items").InsertOne(testCtx(t), bson.D{{Key: "x", Value: 2}}); err != nil {
				t.Errorf("insert after the failure: %v", err)
			}
		})
	}
}

// The load-balancers spec: a client with loadBalanced=true against a server
// that is not behind a load balancer (no serviceId in its hello) fails
// with the message the spec prescribes.
func TestLoadBalancedAgainstNonLoadBalancedServer(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, "mongodb://"+srv.Addr()+"/?loadBalanced=true", nil)
	_, err := c.Database("lb").Collection("items").InsertOne(testCtx(t), bson.D{{Key: "x", Value: 1}})
	const want = "Driver attempted to initialize in load balancing mode, but the server does not support this mode."
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("insert = %v, want an error containing %q", err, want)
	}
}

// The load-balancers spec's connection tracking: a wait queue timeout
// gives maxPoolSize and the connections in use by cursors, transactions
// and other operations.
func TestLoadBalancedWaitQueueTimeoutStatistics(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleLoadBalanced}})
	c := dial(t, srv.URI()+"&maxPoolSize=1&waitQueueTimeoutMS=50", nil)
	coll := c.Database("lb").Collection("items")
	seed(t, coll, 3)
	ctx := testCtx(t)
	cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
	const want = "maxPoolSize: 1, connections in use by cursors: 1, connections in use by transactions: 0, connections in use by other operations: 0"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("insert = %v, want a wait queue timeout containing %q", err, want)
	}
	if !driver.IsTimeout(err) {
		t.Errorf("IsTimeout(%v) = false", err)
	}
	// Closing the cursor gives the connection back, unpinned.
	if err := cur.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "x", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Topology().Servers {
		if s.Pool.InUseByCursors != 0 || s.Pool.InUse != 0 {
			t.Errorf("after Close: pool %+v, want no connection in use", s.Pool)
		}
	}
}

// SDAM and CMAP backpressure: a network error or timeout while
// establishing a connection (here the hello outlives connectTimeoutMS)
// gets the SystemOverloadedError and RetryableError labels, and neither
// clears the pool nor marks the server Unknown.
func TestBackpressureOnConnectionEstablishment(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail bson.D
	}{
		{"network timeout", adoc("failCommands", bson.A{"isMaster", "hello"}, "blockConnection", true, "blockTimeMS", 500, "appName", "backpressureTest")},
		{"network error", adoc("failCommands", bson.A{"isMaster", "hello"}, "closeConnection", true, "appName", "backpressureTest")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{})
			rec := &eventtest.Recorder{Keep: func(e any) bool {
				switch e.(type) {
				case *event.PoolCleared, *event.ServerDescriptionChanged:
					return true
				}
				return false
			}}
			c := dial(t, srv.URI()+"?appname=backpressureTest&serverMonitoringMode=poll&heartbeatFrequencyMS=1000000&connectTimeoutMS=250&socketTimeoutMS=250&retryWrites=false",
				&driver.ClientOptions{Monitors: []any{rec}})
			if _, ok := eventtest.WaitFor(rec, 5*time.Second, func(e *event.ServerDescriptionChanged) bool { return e.New.Kind == "Standalone" }); !ok {
				t.Fatal("the server was not discovered")
			}
			rec.Reset()
			lbFailPoint(t, srv, 0, tc.fail)
			_, err := c.Database("sdam").Collection("items").InsertMany(testCtx(t), []any{bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "_id", Value: 4}}})
			if err == nil {
				t.Fatal("insert succeeded")
			}
			for _, l := range []string{"SystemOverloadedError", "RetryableError"} {
				if !driver.HasErrorLabel(err, l) {
					t.Errorf("the error lacks the label %s: %v", l, err)
				}
			}
			if evs := rec.Names(); len(evs) != 0 {
				t.Errorf("events %v, want none (no PoolCleared, the server stays Standalone)", evs)
			}
			if k := c.Topology().Servers[0].Kind; k != "Standalone" {
				t.Errorf("server is %s, want Standalone", k)
			}
		})
	}
}

var _ = context.Background
