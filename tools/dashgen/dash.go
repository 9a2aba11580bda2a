package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A small typed builder for the part of Grafana's dashboard JSON model
// (schemaVersion 39) that the project's dashboards use: a datasource and a
// cluster template variable, rows, and timeseries and stat panels whose
// Prometheus targets all go through the datasource variable.

const schemaVersion = 39

// datasourceRef is a panel's or a target's data source: always the
// dashboard's datasource variable.
type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

var promDS = &datasourceRef{Type: "prometheus", UID: "${datasource}"}

type Dashboard struct {
	Annotations   annotations `json:"annotations"`
	Description   string      `json:"description"`
	Editable      bool        `json:"editable"`
	GraphTooltip  int         `json:"graphTooltip"`
	Links         []any       `json:"links"`
	Panels        []*Panel    `json:"panels"`
	Refresh       string      `json:"refresh"`
	SchemaVersion int         `json:"schemaVersion"`
	Tags          []string    `json:"tags"`
	Templating    templating  `json:"templating"`
	Time          timeRange   `json:"time"`
	Timepicker    struct{}    `json:"timepicker"`
	Timezone      string      `json:"timezone"`
	Title         string      `json:"title"`
	UID           string      `json:"uid"`
	Version       int         `json:"version"`

	nextID int
	y      int // the next free row of the grid
	x      int // the next free column in the current line
	lineH  int
}

type annotations struct {
	List []any `json:"list"`
}

type templating struct {
	List []Variable `json:"list"`
}

type timeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type Variable struct {
	Name        string         `json:"name"`
	Label       string         `json:"label"`
	Type        string         `json:"type"`
	Description string         `json:"description,omitempty"`
	Datasource  *datasourceRef `json:"datasource,omitempty"`
	Definition  string         `json:"definition,omitempty"`
	Query       any            `json:"query"`
	Regex       string         `json:"regex"`
	Refresh     int            `json:"refresh"`
	Sort        int            `json:"sort,omitempty"`
	Multi       bool           `json:"multi"`
	IncludeAll  bool           `json:"includeAll"`
	AllValue    string         `json:"allValue,omitempty"`
	Hide        int            `json:"hide"`
	Current     map[string]any `json:"current"`
	Options     []any          `json:"options"`
}

type gridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

type Panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	Datasource  *datasourceRef `json:"datasource,omitempty"`
	GridPos     gridPos        `json:"gridPos"`
	Collapsed   *bool          `json:"collapsed,omitempty"`
	FieldConfig *fieldConfig   `json:"fieldConfig,omitempty"`
	Options     map[string]any `json:"options,omitempty"`
	Panels      []*Panel       `json:"panels,omitempty"`
	Targets     []*Target      `json:"targets,omitempty"`
}

type fieldConfig struct {
	Defaults  fieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

type fieldDefaults struct {
	Unit     string         `json:"unit"`
	Min      *float64       `json:"min,omitempty"`
	Max      *float64       `json:"max,omitempty"`
	Decimals *int           `json:"decimals,omitempty"`
	Custom   map[string]any `json:"custom,omitempty"`
	// Thresholds colour a stat: red below the good value, green from it.
	Thresholds *thresholds `json:"thresholds,omitempty"`
}

type thresholds struct {
	Mode  string          `json:"mode"`
	Steps []thresholdStep `json:"steps"`
}

type thresholdStep struct {
	Color string   `json:"color"`
	Value *float64 `json:"value"`
}

// GoodFrom colours a stat red below v and green from v on.
func (p *Panel) GoodFrom(v float64) *Panel {
	p.FieldConfig.Defaults.Thresholds = &thresholds{Mode: "absolute", Steps: []thresholdStep{
		{Color: "red"}, {Color: "green", Value: &v},
	}}
	return p
}

// BadFrom colours a stat green below v and red from v on.
func (p *Panel) BadFrom(v float64) *Panel {
	p.FieldConfig.Defaults.Thresholds = &thresholds{Mode: "absolute", Steps: []thresholdStep{
		{Color: "green"}, {Color: "red", Value: &v},
	}}
	return p
}

type Target struct {
	Datasource   *datasourceRef `json:"datasource"`
	Expr         string         `json:"expr"`
	LegendFormat string         `json:"legendFormat"`
	RefID        string         `json:"refId"`
	Range        bool           `json:"range"`
	Instant      bool           `json:"instant"`
	Exemplar     bool           `json:"exemplar"`
}

// Units, by their Grafana ids.
const (
	Seconds = "s"
	Percent = "percentunit"
	Short   = "short"
	OpsSec  = "ops"
)

// NewDashboard returns a dashboard with the two template variables every
// project dashboard has: datasource (any Prometheus) and cluster
// (mongoprobe's cluster label, several at once or All).
func NewDashboard(uid, title, description string) *Dashboard {
	return &Dashboard{
		Annotations:   annotations{List: []any{}},
		Description:   description,
		GraphTooltip:  1,
		Links:         []any{},
		Panels:        []*Panel{},
		Refresh:       "30s",
		SchemaVersion: schemaVersion,
		Tags:          []string{"mongoscope"},
		Templating: templating{List: []Variable{
			{
				Name: "datasource", Label: "Data source", Type: "datasource",
				Description: "The Prometheus that scrapes mongoprobe",
				Query:       "prometheus", Current: map[string]any{}, Options: []any{}, Refresh: 1,
			},
			{
				Name: "cluster", Label: "Cluster", Type: "query",
				Description: "mongoprobe's cluster label",
				Datasource:  promDS,
				Definition:  "label_values(mongoprobe_up, cluster)",
				Query: map[string]any{
					"qryType": 1,
					"query":   "label_values(mongoprobe_up, cluster)",
					"refId":   "PrometheusVariableQueryEditor-VariableQuery",
				},
				Refresh: 2, Sort: 1, Multi: true, IncludeAll: true, AllValue: ".*",
				Current: map[string]any{}, Options: []any{},
			},
		}},
		Time:    timeRange{From: "now-1h", To: "now"},
		Title:   title,
		UID:     uid,
		Version: 1,
		nextID:  1,
	}
}

func (d *Dashboard) id() int {
	id := d.nextID
	d.nextID++
	return id
}

// Row starts a new row of panels.
func (d *Dashboard) Row(title string) {
	d.newline()
	f := false
	d.Panels = append(d.Panels, &Panel{
		ID: d.id(), Type: "row", Title: title, Collapsed: &f,
		GridPos: gridPos{H: 1, W: 24, X: 0, Y: d.y},
		Panels:  []*Panel{},
	})
	d.y++
}

func (d *Dashboard) newline() {
	if d.x > 0 {
		d.y += d.lineH
		d.x, d.lineH = 0, 0
	}
}

// place lays a panel w columns wide and h high after the previous one.
func (d *Dashboard) place(p *Panel, w, h int) {
	if d.x+w > 24 {
		d.newline()
	}
	p.GridPos = gridPos{H: h, W: w, X: d.x, Y: d.y}
	d.x += w
	if h > d.lineH {
		d.lineH = h
	}
	d.Panels = append(d.Panels, p)
}

// Q is one query of a panel: a PromQL expression and its legend.
type Q struct {
	Expr   string
	Legend string
}

func (d *Dashboard) targets(qs []Q, exemplar bool) []*Target {
	ts := make([]*Target, len(qs))
	for i, q := range qs {
		ts[i] = &Target{
			Datasource: promDS, Expr: q.Expr, LegendFormat: q.Legend,
			RefID: string(rune('A' + i)), Range: true, Exemplar: exemplar,
		}
	}
	return ts
}

// TimeSeries adds a timeseries panel, eight columns wide.
func (d *Dashboard) TimeSeries(title, description, unit string, qs ...Q) *Panel {
	p := &Panel{
		ID: d.id(), Type: "timeseries", Title: title, Description: description,
		Datasource: promDS,
		FieldConfig: &fieldConfig{
			Defaults: fieldDefaults{Unit: unit, Custom: map[string]any{
				"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10,
				"showPoints": "never", "spanNulls": false,
			}},
			Overrides: []any{},
		},
		Options: map[string]any{
			"legend":  map[string]any{"displayMode": "list", "placement": "bottom", "showLegend": true},
			"tooltip": map[string]any{"mode": "multi", "sort": "desc"},
		},
		Targets: d.targets(qs, false),
	}
	d.place(p, 8, 8)
	return p
}

// Histogram adds a timeseries panel of quantiles from a histogram, whose
// targets ask for exemplars: Grafana draws them as points that link, through
// the data source's exemplarTraceIdDestinations, to the trace.
func (d *Dashboard) Histogram(title, description, unit string, qs ...Q) *Panel {
	p := d.TimeSeries(title, description, unit, qs...)
	for _, t := range p.Targets {
		t.Exemplar = true
	}
	return p
}

// Stat adds a stat panel showing the last value, four columns wide.
func (d *Dashboard) Stat(title, description, unit string, qs ...Q) *Panel {
	p := &Panel{
		ID: d.id(), Type: "stat", Title: title, Description: description,
		Datasource: promDS,
		FieldConfig: &fieldConfig{
			Defaults:  fieldDefaults{Unit: unit},
			Overrides: []any{},
		},
		Options: map[string]any{
			"colorMode":   "background",
			"graphMode":   "none",
			"justifyMode": "auto",
			"orientation": "auto",
			"textMode":    "value_and_name",
			"reduceOptions": map[string]any{
				"calcs": []string{"lastNotNull"}, "fields": "", "values": false,
			},
		},
		Targets: d.targets(qs, false),
	}
	d.place(p, 4, 4)
	return p
}

// JSON is the dashboard as the file Grafana provisions: indented, with a
// final newline.
func (d *Dashboard) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("dashboard %s: %w", d.UID, err)
	}
	return buf.Bytes(), nil
}
