package selection

import (
	"strings"
	"testing"
	"time"
)

// The fixed texts of the common selectors are what the general rendering
// gives, and rendering them allocates nothing.
func TestSelectorStringFixedTexts(t *testing.T) {
	render := func(s Selector) string { // the general rendering
		var b strings.Builder
		if s.Write {
			b.WriteString("write")
		} else {
			b.WriteString("read ")
			b.WriteString(s.ReadPref.String())
		}
		return b.String()
	}
	neg := -time.Second
	sels := []Selector{{Write: true}, {ReadPref: ReadPref{MaxStaleness: &neg}}}
	for m := range modeNames {
		sels = append(sels, Selector{ReadPref: ReadPref{Mode: Mode(m)}})
	}
	for _, s := range sels {
		if got, want := s.String(), render(s); got != want {
			t.Errorf("%+v: String() = %q, want %q", s, got, want)
		}
		if n := testing.AllocsPerRun(100, func() { _ = s.String() }); n != 0 {
			t.Errorf("%+v: String() allocates %v times", s, n)
		}
	}
	ms := 90 * time.Second
	if got := (Selector{ReadPref: ReadPref{Mode: Secondary, MaxStaleness: &ms}}).String(); got != "read {mode: secondary, maxStalenessSeconds: 90}" {
		t.Errorf("with maxStaleness: %q", got)
	}
	if got := (Selector{ReadPref: ReadPref{Mode: Mode(9)}}).String(); got != "read {mode: Mode(9)}" {
		t.Errorf("an unknown mode: %q", got)
	}
}
