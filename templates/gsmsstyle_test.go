package templates

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// gsmsStyleProblems are three word problems written for this project in the
// annotation syntax of the GSM-Symbolic template release (question, answer,
// id_orig, question_annotated, answer_annotated). They are written into a
// temporary folder by samplesDir, not tracked as template files, so that no
// file in the repository passes for one of the published templates; a real
// user points the tool at their own copy of the GSM-Symbolic templates.
var gsmsStyleProblems = map[string]string{
	"notebooks.json": `{
  "question": "Tomas buys 3 notebooks at $4 each and pays with a $20 bill. How much change does he get?",
  "answer": "The notebooks cost 3 * 4 = <<3*4=12>>12 dollars.\nHis change is 20 - 12 = <<20-12=8>>8 dollars.\n#### 8",
  "id_orig": 9002,
  "question_annotated": "{name,Tomas} buys {n,3} {item,notebooks} at {cur,$}{p,4} each and pays with a {cur,$}{bill,20} bill. How much change does he get?\n\n#init:\n- name = sample(names_male)\n- item = sample([\"notebooks\", \"pens\", \"folders\"])\n- cur = sample(currencies_sym)\n- $n = range(2, 10)\n- $p = range(2, 15)\n- $bill = sample([20, 50, 100])\n\n#conditions:\n- n*p < bill\n- is_int(bill/1)\n\n#answer: bill - n*p",
  "answer_annotated": "The {item} cost {n} * {p} = <<{n}*{p}={n*p}>>{n*p}.\nHis change is {bill} - {n*p} = <<{bill}-{n*p}={bill-n*p}>>{bill-n*p}.\n#### {bill-n*p}"
}`,
	"novel.json": `{
  "question": "Ines reads a 120-page novel at the same pace over 5 days. How many pages does she read each day?",
  "answer": "She reads 120 / 5 = <<120/5=24>>24 pages each day.\n#### 24",
  "id_orig": 9001,
  "question_annotated": "{name,Ines} reads a {x,120}-page {item,novel} at the same pace over {d,5} days. How many pages does she read each day?\n\n#init:\n- name = sample(names_female)\n- item = sample([\"novel\", \"biography\", \"cookbook\"])\n- $x = range(40, 600, 10)\n- $d = range(2, 15)\n\n#conditions:\n- divides(x, d)\n\n#answer: x // d",
  "answer_annotated": "She reads {x} / {d} = <<{x}/{d}={x//d}>>{x//d} pages each day.\n#### {x//d}"
}`,
	"pencils.json": `{
  "question": "A shop has 6 boxes of 8 pencils each. It gives 9 pencils to a school. How many pencils does the shop have left?",
  "answer": "The shop has 6 * 8 = <<6*8=48>>48 pencils.\nAfter giving away 9, it has 48 - 9 = <<48-9=39>>39 pencils left.\n#### 39",
  "id_orig": 9000,
  "question_annotated": "A {place,shop} has {b,6} boxes of {p,8} pencils each. It gives {g,9} pencils to a school. How many pencils does the {place,shop} have left?\n\n#init:\n- place = sample([\"shop\", \"library\", \"studio\"])\n- $b = range(2, 20)\n- $p = range(4, 25)\n- $g = range(1, 50)\n\n#conditions:\n- g < b*p\n\n#answer: b*p - g",
  "answer_annotated": "The {place} has {b} * {p} = <<{b}*{p}={b*p}>>{b*p} pencils.\nAfter giving away {g}, it has {b*p} - {g} = <<{b*p}-{g}={b*p-g}>>{b*p-g} pencils left.\n#### {b*p-g}"
}`,
}

// samplesDir writes gsmsStyleProblems into a temporary folder of the
// running test and returns it (the same folder for every call of one test,
// since loaded templates record their source path), so the importer tests
// run in a clone without the project's shared/ directory.
func samplesDir(t testing.TB) string {
	t.Helper()
	samplesDirs.Lock()
	defer samplesDirs.Unlock()
	if d, ok := samplesDirs.m[t.Name()]; ok {
		return d
	}
	dir := t.TempDir()
	for name, data := range gsmsStyleProblems {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	samplesDirs.m[t.Name()] = dir
	t.Cleanup(func() {
		samplesDirs.Lock()
		delete(samplesDirs.m, t.Name())
		samplesDirs.Unlock()
	})
	return dir
}

// samplesDirs is samplesDir's folder per running test.
var samplesDirs = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}
