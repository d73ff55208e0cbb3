// symgo: a Go program for the symbolizer test.  The test builds it twice
// (stripped with -ldflags='-s -w' and not), reads main.main's address from
// the unstripped build with `go tool nm`, runs the stripped one and checks
// that the address resolves through .gopclntab alone.
package main

import (
	"fmt"
	"os"
	"reflect"
)

//go:noinline
func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

func main() {
	// The runtime address of main.work: the test derives the load bias of
	// PIE builds from it and the link-time address `go tool nm` shows.
	fmt.Printf("work %#x\n", reflect.ValueOf(work).Pointer())
	fmt.Println("ready", work(10))
	buf := make([]byte, 1)
	for {
		if _, err := os.Stdin.Read(buf); err != nil {
			return
		}
	}
}
