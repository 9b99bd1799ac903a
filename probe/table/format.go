package table

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fragility/fragility/probe/summary"
)

// Formats are the output formats of the table: Text (a table for the
// terminal) and the machine-readable or standalone ones.
const (
	FormatText = "text"
	FormatCSV  = "csv"
	FormatJSON = "json"
	FormatHTML = "html"
)

// Formats lists the formats in the order help names them.
var Formats = []string{FormatText, FormatCSV, FormatJSON, FormatHTML}

// Write writes t to w in format (one of Formats).
func (t *Table) Write(w io.Writer, format string) error {
	switch format {
	case FormatText, "":
		return t.Text(w)
	case FormatCSV:
		return t.CSV(w)
	case FormatJSON:
		return t.JSON(w)
	case FormatHTML:
		return t.HTML(w)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// header is the text and HTML table's headings: an accuracy column per
// variant after the protocol.
func (t *Table) header() []string {
	h := []string{"run", "model", "quant", "protocol"}
	if !t.Comparable {
		h[3] = "protocol (differs)"
	}
	for _, v := range t.Variants {
		h = append(h, v)
	}
	return append(h, "verdict variant", "paired drop pp [CI]", "stability excess pp [CI]", "answer first nats [CI]", "cut by budget", "verdict")
}

// cells are the text and HTML cells of r, in header order.
func (t *Table) cells(r *Row) []string {
	c := []string{r.Dir, r.Model, r.Quantization, ShortProtocol(r.Protocol)}
	for _, a := range r.Accuracy {
		if a.Pct == nil {
			c = append(c, "—")
		} else {
			c = append(c, fnum(*a.Pct, 1)+"%")
		}
	}
	excess := valueText(r.Excess, 1, true)
	if r.Excess == nil {
		excess = shortNote(r.ExcessNote)
	}
	cut := "—"
	if r.CutPct != nil {
		cut = fmt.Sprintf("%s%% (%d/%d)", fnum(*r.CutPct, 1), r.Cut, r.Scored)
	}
	return append(c, orDash(r.VerdictVariant), valueText(r.Drop, 1, false), excess, valueText(r.AnswerFirst, 2, true), cut, orDash(r.Verdict))
}

// Text writes t as a table for a terminal: the note first when the rows
// are not comparable.
func (t *Table) Text(w io.Writer) error {
	if t.Note != "" {
		if _, err := fmt.Fprintln(w, t.Note); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header(), "\t"))
	for i := range t.Rows {
		fmt.Fprintln(tw, strings.Join(t.cells(&t.Rows[i]), "\t"))
	}
	return tw.Flush()
}

// CSVHeader is the header of the CSV form: the accuracy columns are
// "acc_" and the variant, in t.Variants order.
func (t *Table) CSVHeader() []string {
	h := []string{"dir", "model", "quantization", "condition", "protocol", "comparable"}
	for _, v := range t.Variants {
		h = append(h, "acc_"+v)
	}
	return append(h, "verdict_variant", "paired_drop_pp", "paired_drop_lo", "paired_drop_hi",
		"stability_excess_pp", "stability_excess_lo", "stability_excess_hi", "stability_excess_note",
		"answer_first_shift_nats", "answer_first_lo", "answer_first_hi", "cut_by_budget", "scored", "cut_pct", "verdict")
}

// CSV writes t as CSV: a header (CSVHeader), then one record per row;
// numbers in shortest round-trip form, empty where there is none. The
// comparable column is false in every row when the rows follow more than
// one protocol.
func (t *Table) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.CSVHeader()); err != nil {
		return err
	}
	for i := range t.Rows {
		r := &t.Rows[i]
		rec := []string{r.Dir, r.Model, r.Quantization, r.Condition, r.Protocol, strconv.FormatBool(t.Comparable)}
		for _, a := range r.Accuracy {
			rec = append(rec, fopt(a.Pct))
		}
		rec = append(rec, r.VerdictVariant)
		rec = append(rec, valueCols(r.Drop)...)
		rec = append(rec, valueCols(r.Excess)...)
		rec = append(rec, r.ExcessNote)
		rec = append(rec, valueCols(r.AnswerFirst)...)
		cut, scored := "", ""
		if r.VerdictVariant != "" {
			cut, scored = strconv.Itoa(r.Cut), strconv.Itoa(r.Scored)
		}
		rec = append(rec, cut, scored, fopt(r.CutPct), r.Verdict)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// JSON writes t as indented JSON.
func (t *Table) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

// HTML writes t as one self-contained page: the table, the note when the
// rows are not comparable, and where the numbers come from; nothing is
// loaded from elsewhere.
func (t *Table) HTML(w io.Writer) error {
	type row struct {
		Cells []string
		Note  string // the stability note in full, as the cell's title
	}
	data := struct {
		Note   string
		Header []string
		Rows   []row
		Excess int // the stability excess's column
	}{Note: t.Note, Header: t.header(), Excess: 4 + len(t.Variants) + 2}
	for i := range t.Rows {
		data.Rows = append(data.Rows, row{Cells: t.cells(&t.Rows[i]), Note: t.Rows[i].ExcessNote})
	}
	return pageTemplate.Execute(w, data)
}

var pageTemplate = template.Must(template.New("table").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>fragility table</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
.warn { border-left: 4px solid #c60; background: #fff4e5; padding: 0.5em 0.8em; }
.foot { color: #555; font-size: 0.85em; max-width: 60em; }
</style>
</head>
<body>
<h1>Runs side by side</h1>
{{if .Note}}<p class="warn">{{.Note}}</p>
{{end}}<table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{$note := .Note}}{{range $i, $c := .Cells}}<td{{if and (eq $i $.Excess) $note}} title="{{$note}}"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
<p class="foot">One row per model of each run directory, read from its summary.json and manifest.json (fragility table).
Accuracy per variant in percent; the verdict variant's paired drop in percentage points with its reported interval;
the stability excess over the placebo in percentage points; the answer-first log-probability shift of the verdict variant in nats;
the share of the verdict variant's scored answers the output budget cut. "(" or ")" marks a limit outside its interval.</p>
</body>
</html>
`))

// valueText is "v [lo, hi]" (signed when sign is true), "v [no
// interval: why]", or "—" for nil.
func valueText(v *Value, prec int, sign bool) string {
	if v == nil {
		return "—"
	}
	x := fnum(v.Value, prec)
	if sign {
		x = signed(v.Value, prec)
	}
	switch {
	case v.CI != nil:
		return x + " " + ivText(v.CI, prec)
	case v.NoCI != "":
		return x + " [no interval: " + v.NoCI + "]"
	}
	return x
}

// valueCols are the CSV columns of v: value, lower and upper limit.
func valueCols(v *Value) []string {
	if v == nil {
		return []string{"", "", ""}
	}
	out := []string{gnum(v.Value), "", ""}
	if v.CI != nil {
		out[1], out[2] = gnum(v.CI.Lo), gnum(v.CI.Hi)
	}
	return out
}

// ivText formats an interval "[lo, hi]", "(" or ")" for an open limit.
func ivText(iv *summary.Interval, prec int) string {
	open, close := "[", "]"
	if iv.LoOpen {
		open = "("
	}
	if iv.HiOpen {
		close = ")"
	}
	return open + fnum(iv.Lo, prec) + ", " + fnum(iv.Hi, prec) + close
}

// shortNote is a "not assessed: REASON" note cut at the end of the
// reason's first clause, for a table cell.
func shortNote(s string) string {
	head, reason, ok := strings.Cut(s, ": ")
	if !ok {
		return s
	}
	for _, sep := range []string{": ", " (", ", so "} {
		if i := strings.Index(reason, sep); i > 0 {
			reason = reason[:i]
		}
	}
	return head + ": " + reason
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func fnum(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

func signed(x float64, prec int) string {
	s := fnum(x, prec)
	if !strings.HasPrefix(s, "-") && strings.Trim(s, "0.") != "" {
		s = "+" + s
	}
	return s
}

func gnum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func fopt(x *float64) string {
	if x == nil {
		return ""
	}
	return gnum(*x)
}
