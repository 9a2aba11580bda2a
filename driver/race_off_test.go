//go:build !race

package driver_test

// raceEnabled: the race detector changes allocations, and its sync.Pool
// drops a share of what is put back on purpose.
const raceEnabled = false
