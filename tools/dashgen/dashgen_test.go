package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedDashboardsAreGenerated: the JSON in dashboards/ is this
// program's output, byte for byte; make dashboards rewrites it.
func TestCommittedDashboardsAreGenerated(t *testing.T) {
	for name, d := range Files() {
		want, err := d.JSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "dashboards", name))
		if err != nil {
			t.Fatalf("%v (run make dashboards)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("dashboards/%s is not dashgen's output: run make dashboards and commit the result", name)
		}
	}
}

// TestLayout: panels do not overlap and stay inside Grafana's 24 columns.
func TestLayout(t *testing.T) {
	for name, d := range Files() {
		type cell struct{ x, y int }
		used := map[cell]string{}
		for _, p := range d.Panels {
			g := p.GridPos
			if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
				t.Errorf("%s: panel %q has gridPos %+v", name, p.Title, g)
			}
			for x := g.X; x < g.X+g.W; x++ {
				for y := g.Y; y < g.Y+g.H; y++ {
					if other, ok := used[cell{x, y}]; ok {
						t.Fatalf("%s: panels %q and %q overlap at (%d, %d)", name, other, p.Title, x, y)
					}
					used[cell{x, y}] = p.Title
				}
			}
		}
	}
}
