package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	ours "github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
	theirs "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// The failover rows: failoverWorkers goroutines update (w: majority) and
// read on a mongotest 3-member replica set, in this process, while the
// primary is stepped down at a fixed interval; once with retryReads and
// retryWrites on (the default) and once with both off, for each driver.
// Each goroutine owns one document and $inc's its counter, so that at
// the end the counter tells writes lost (acknowledged but missing) from
// writes applied twice (more increments than attempts could explain).
const failoverWorkers = 8

// failoverClient is one driver's side of the rows.
type failoverClient struct {
	seed   func(ctx context.Context) error
	update func(ctx context.Context, g int) error
	find   func(ctx context.Context, g int) error
	count  func(ctx context.Context, g int) (int64, error)
	close  func()
}

type failoverResult struct {
	ops, errs    int64
	lost, double int64
	longest      time.Duration
	stepDowns    int
	firstErr     string
}

func runFailover(sel *regexp.Regexp, duration, every time.Duration, after bool) {
	type row struct {
		driverName string
		retries    bool
	}
	var rows []row
	for _, d := range []string{"ours", "theirs"} {
		for _, r := range []bool{true, false} {
			name := failoverRowName(d, r)
			if sel.MatchString(name) {
				rows = append(rows, row{d, r})
			}
		}
	}
	if len(rows) == 0 || duration <= 0 {
		return
	}
	if after {
		fmt.Println()
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\toperations\tapplication errors\tlost writes\twrites applied twice\tlongest operation\tstep-downs\t")
	var notes []string
	for _, r := range rows {
		res, err := failoverRow(r.driverName, r.retries, duration, every)
		if err != nil {
			fail(fmt.Errorf("%s: %w", failoverRowName(r.driverName, r.retries), err))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%d\t\n", failoverRowName(r.driverName, r.retries), res.ops, res.errs,
			res.lost, res.double, res.longest.Round(time.Millisecond), res.stepDowns)
		if res.firstErr != "" {
			notes = append(notes, fmt.Sprintf("%s, first error: %s", failoverRowName(r.driverName, r.retries), res.firstErr))
		}
	}
	tw.Flush()
	fmt.Printf(`
failover rows: %d goroutines, each with its own document, alternate an
updateOne {$inc: {n: 1}} with w: majority and a findOne, for %s on a
mongotest 3-member replica set in this process, whose primary is stepped
down every %s (another member is elected after mongotest's election delay).
"application errors" are the operations that returned an error. "lost
writes" are acknowledged increments missing from the final counters;
"writes applied twice" are increments beyond the acknowledged ones plus
the failed ones, which may or may not have been applied. "longest
operation" is the slowest single call, step-downs included.
`, failoverWorkers, duration, every)
	for _, n := range notes {
		fmt.Println(n)
	}
}

func failoverRowName(driverName string, retries bool) string {
	if retries {
		return "failover, " + driverName + ", retries on"
	}
	return "failover, " + driverName + ", retries off"
}

func failoverRow(driverName string, retries bool, duration, every time.Duration) (failoverResult, error) {
	rs, err := mongotest.StartReplicaSet(3, mongotest.ReplicaSetOptions{})
	if err != nil {
		return failoverResult{}, err
	}
	defer rs.Close()
	uri := rs.URI()
	if !retries {
		uri += "&retryWrites=false&retryReads=false"
	}
	var fc *failoverClient
	if driverName == "ours" {
		fc, err = oursFailoverClient(uri)
	} else {
		fc, err = theirsFailoverClient(uri)
	}
	if err != nil {
		return failoverResult{}, err
	}
	defer fc.close()
	ctx, cancel := context.WithTimeout(context.Background(), duration+2*time.Minute)
	defer cancel()
	if err := fc.seed(ctx); err != nil {
		return failoverResult{}, err
	}

	var (
		res      failoverResult
		acked    [failoverWorkers]atomic.Int64
		failed   [failoverWorkers]atomic.Int64
		ops      atomic.Int64
		errs     atomic.Int64
		longest  atomic.Int64
		firstErr sync.Once
		wg       sync.WaitGroup
	)
	stop := time.Now().Add(duration)
	note := func(d time.Duration, err error) {
		ops.Add(1)
		for {
			l := longest.Load()
			if int64(d) <= l || longest.CompareAndSwap(l, int64(d)) {
				break
			}
		}
		if err != nil {
			errs.Add(1)
			firstErr.Do(func() { res.firstErr = err.Error() })
		}
	}
	for g := range failoverWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				t0 := time.Now()
				err := fc.update(ctx, g)
				note(time.Since(t0), err)
				if err == nil {
					acked[g].Add(1)
				} else {
					failed[g].Add(1)
				}
				t0 = time.Now()
				note(time.Since(t0), fc.find(ctx, g))
			}
		}()
	}
	ticker := time.NewTicker(every)
	for time.Now().Add(every).Before(stop.Add(every / 2)) {
		<-ticker.C
		// The old primary may be elected again after half an interval,
		// so that every step-down finds another member electable.
		if err := rs.StepDownFor(ctx, max(every/2, time.Second)); err == nil {
			res.stepDowns++
		}
	}
	ticker.Stop()
	wg.Wait()
	if _, err := rs.WaitForPrimary(ctx); err != nil {
		return res, err
	}
	for g := range failoverWorkers {
		var n int64
		var err error
		for range 50 { // the counter is read with retries of our own
			if n, err = fc.count(ctx, g); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			return res, fmt.Errorf("reading counter %d: %w", g, err)
		}
		a, f := acked[g].Load(), failed[g].Load()
		if n < a {
			res.lost += a - n
		}
		if n > a+f {
			res.double += n - a - f
		}
	}
	res.ops, res.errs, res.longest = ops.Load(), errs.Load(), time.Duration(longest.Load())
	return res, nil
}

func oursFailoverClient(uri string) (*failoverClient, error) {
	o := &driver.ClientOptions{}
	if err := o.ApplyURI(uri); err != nil {
		return nil, err
	}
	c, err := driver.Connect(context.Background(), o)
	if err != nil {
		return nil, err
	}
	coll := c.Database("bench").Collection("failover", &driver.CollectionOptions{WriteConcern: driver.Majority()})
	return &failoverClient{
		seed: func(ctx context.Context) error {
			if err := coll.Drop(ctx); err != nil {
				return err
			}
			docs := make([]any, failoverWorkers)
			for g := range docs {
				docs[g] = ours.D{{Key: "_id", Value: int32(g)}, {Key: "n", Value: int64(0)}}
			}
			_, err := coll.InsertMany(ctx, docs)
			return err
		},
		update: func(ctx context.Context, g int) error {
			_, err := coll.UpdateOne(ctx, ours.D{{Key: "_id", Value: int32(g)}}, ours.D{{Key: "$inc", Value: ours.D{{Key: "n", Value: int64(1)}}}})
			return err
		},
		find: func(ctx context.Context, g int) error {
			return coll.FindOne(ctx, ours.D{{Key: "_id", Value: int32(g)}}).Err()
		},
		count: func(ctx context.Context, g int) (int64, error) {
			var d struct{ N int64 }
			err := coll.FindOne(ctx, ours.D{{Key: "_id", Value: int32(g)}}).Decode(&d)
			return d.N, err
		},
		close: func() { _ = c.Disconnect(context.Background()) },
	}, nil
}

func theirsFailoverClient(uri string) (*failoverClient, error) {
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return nil, err
	}
	coll := c.Database("bench").Collection("failover", options.Collection().SetWriteConcern(writeconcern.Majority()))
	return &failoverClient{
		seed: func(ctx context.Context) error {
			if err := coll.Drop(ctx); err != nil {
				return err
			}
			docs := make([]any, failoverWorkers)
			for g := range docs {
				docs[g] = theirs.D{{Key: "_id", Value: int32(g)}, {Key: "n", Value: int64(0)}}
			}
			_, err := coll.InsertMany(ctx, docs)
			return err
		},
		update: func(ctx context.Context, g int) error {
			_, err := coll.UpdateOne(ctx, theirs.D{{Key: "_id", Value: int32(g)}}, theirs.D{{Key: "$inc", Value: theirs.D{{Key: "n", Value: int64(1)}}}})
			return err
		},
		find: func(ctx context.Context, g int) error {
			return coll.FindOne(ctx, theirs.D{{Key: "_id", Value: int32(g)}}).Err()
		},
		count: func(ctx context.Context, g int) (int64, error) {
			var d struct {
				N int64 `bson:"n"`
			}
			err := coll.FindOne(ctx, theirs.D{{Key: "_id", Value: int32(g)}}).Decode(&d)
			return d.N, err
		},
		close: func() { _ = c.Disconnect(context.Background()) },
	}, nil
}
