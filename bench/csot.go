package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	ours "github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
	theirs "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The CSOT accuracy rows: a find with timeoutMS t against a server that
// blocks every find for 10 t (mongotest's failCommand blockConnection),
// run n times in a row; each row reports, over the runs, how long after t
// the call returned: the median, the 99th percentile and the earliest
// (negative: before t). Both drivers take timeoutMS from the URI.
var csotBudgets = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond}

type csotStats struct {
	median, p99, earliest time.Duration
	timeouts              int // runs that failed with a timeout, as they must
	firstOther            string
}

func runCSOT(sel *regexp.Regexp, runs int, after bool) bool {
	var budgets []time.Duration
	for _, b := range csotBudgets {
		if sel.MatchString(csotRowName(b)) {
			budgets = append(budgets, b)
		}
	}
	if len(budgets) == 0 || runs <= 0 {
		return false
	}
	if after {
		fmt.Println()
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\truns\tours median\ttheirs median\tours p99\ttheirs p99\tours earliest\ttheirs earliest\tours timeouts\ttheirs timeouts\t")
	var notes []string
	for _, b := range budgets {
		o, err := csotRow("ours", b, runs)
		if err != nil {
			fail(fmt.Errorf("%s (ours): %w", csotRowName(b), err))
		}
		th, err := csotRow("theirs", b, runs)
		if err != nil {
			fail(fmt.Errorf("%s (theirs): %w", csotRowName(b), err))
		}
		ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms" }
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t\n", csotRowName(b), runs, ms(o.median), ms(th.median),
			ms(o.p99), ms(th.p99), ms(o.earliest), ms(th.earliest), o.timeouts, th.timeouts)
		for _, x := range []struct {
			side string
			s    csotStats
		}{{"ours", o}, {"theirs", th}} {
			if x.s.firstOther != "" {
				notes = append(notes, fmt.Sprintf("%s, %s: a run ended without a timeout: %s", csotRowName(b), x.side, x.s.firstOther))
			}
		}
	}
	tw.Flush()
	fmt.Printf(`
CSOT accuracy rows: findOne with timeoutMS set in the URI against a
mongotest server in this process whose failCommand fail point blocks every
find for 10 times the budget; %d runs in a row per driver and budget. The
columns are the return time minus timeoutMS (negative: early). "timeouts"
counts the runs that failed with a timeout, as every run must.
`, runs)
	for _, n := range notes {
		fmt.Println(n)
	}
	return true
}

func csotRowName(b time.Duration) string {
	return "CSOT accuracy, timeoutMS " + strconv.Itoa(int(b/time.Millisecond))
}

func csotRow(side string, budget time.Duration, runs int) (csotStats, error) {
	srv, err := mongotest.Start(mongotest.Options{CommandLogSize: -1})
	if err != nil {
		return csotStats{}, err
	}
	defer srv.Close()
	ms := int64(budget / time.Millisecond)
	if err := srv.SetFailPoint(ours.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: ours.D{{Key: "failCommands", Value: ours.A{"find"}}, {Key: "blockConnection", Value: true},
			{Key: "blockTimeMS", Value: 10 * ms}}}}); err != nil {
		return csotStats{}, err
	}
	uri := srv.URI()
	sep := "?"
	if regexp.MustCompile(`\?`).MatchString(uri) {
		sep = "&"
	}
	uri += sep + "timeoutMS=" + strconv.FormatInt(ms, 10)
	var find func() error
	var closeFn func()
	switch side {
	case "ours":
		o := &driver.ClientOptions{}
		if err := o.ApplyURI(uri); err != nil {
			return csotStats{}, err
		}
		c, err := driver.Connect(context.Background(), o)
		if err != nil {
			return csotStats{}, err
		}
		coll := c.Database("bench").Collection("csot")
		find = func() error { return coll.FindOne(context.Background(), ours.D{}).Err() }
		closeFn = func() { _ = c.Disconnect(context.Background()) }
	default:
		c, err := mongo.Connect(options.Client().ApplyURI(uri))
		if err != nil {
			return csotStats{}, err
		}
		coll := c.Database("bench").Collection("csot")
		find = func() error { return coll.FindOne(context.Background(), theirs.D{}).Err() }
		closeFn = func() { _ = c.Disconnect(context.Background()) }
	}
	defer closeFn()
	var st csotStats
	over := make([]time.Duration, 0, runs)
	for range runs {
		t0 := time.Now()
		err := find()
		over = append(over, time.Since(t0)-budget)
		switch {
		case err != nil && (errorsIsDeadline(err) || driver.IsTimeout(err) || mongo.IsTimeout(err)):
			st.timeouts++
		case st.firstOther == "":
			st.firstOther = fmt.Sprint(err)
		}
	}
	sort.Slice(over, func(i, j int) bool { return over[i] < over[j] })
	st.median, st.p99, st.earliest = over[len(over)/2], over[(len(over)*99+99)/100-1], over[0]
	return st, nil
}

func errorsIsDeadline(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
