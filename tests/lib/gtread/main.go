// gtread: Go's own reader of Go 1.22+ traces (internal/trace of the Go
// release that builds it, copied by tests/lib/gtread.sh: the very code
// `go tool trace -d=1` runs, which no program outside Go's tree may
// import) over many files in one process.  Per file one line:
//
//	ok FILE events=N gens=N first_ns=N last_ns=N
//	invalid FILE: ERROR
//
// (ERROR on one line: " | " where Go's had a line break)//
// events: every event Go's reader returns but its Sync events (one per
// generation: gens); first_ns, last_ns: the first and last event's times
// as Go's reader gives them.  A panic of the reader counts as invalid (the
// tool would die of it).  Files are named on the command line, or one a
// line on stdin with "-".  Exit 0.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"gtr/trace"
)

// oneLine: Go's errors may span lines (its frontier dumps).
func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " | ")
}

func read(path string) (line string) {
	defer func() {
		if p := recover(); p != nil {
			line = fmt.Sprintf("invalid %s: panic: %s", path, oneLine(fmt.Errorf("%v", p)))
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("invalid %s: %s", path, oneLine(err))
	}
	defer f.Close()
	r, err := trace.NewReader(bufio.NewReader(f))
	if err != nil {
		return fmt.Sprintf("invalid %s: %s", path, oneLine(err))
	}
	var n, gens uint64
	var first, last trace.Time
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Sprintf("invalid %s: %s", path, oneLine(err))
		}
		if ev.Kind() == trace.EventSync {
			gens++
			continue
		}
		if n == 0 {
			first = ev.Time()
		}
		last = ev.Time()
		n++
	}
	return fmt.Sprintf("ok %s events=%d gens=%d first_ns=%d last_ns=%d", path, n, gens, first, last)
}

func main() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	if len(os.Args) == 2 && os.Args[1] == "-" {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			fmt.Fprintln(out, read(in.Text()))
			out.Flush()
		}
		return
	}
	for _, p := range os.Args[1:] {
		fmt.Fprintln(out, read(p))
	}
}
