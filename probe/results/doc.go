// Package results is the trial record of a run: Trial (one row of
// results.csv), the file's format (WriteCSV, ReadCSV: the columns are
// Trial's json tags in field order, floats in shortest round-trip form),
// and the names of conditions and of items under a condition.
//
// It is a leaf of the probe packages: package probe writes trials, package
// summary reads them, package report shows them. It must not compute a
// statistic, score an answer or know about models.
package results
