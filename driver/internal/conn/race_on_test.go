//go:build race

package conn

// raceEnabled: the race detector changes escape analysis and allocation counts.
const raceEnabled = true
