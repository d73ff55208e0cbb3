// v2shapes: one goroutine of each kind of wait, each held for HOLD (2.5 s
// unless told: past two of the runtime's 1 s generations), traced by
// runtime/trace (Go 1.23: v2) while gotraced may record it too
// (tests/integration/record_v2shapes.sh compares the two files):
//   - a blocking syscall: read(2) of a pipe opened blocking (syscall.Pipe,
//     not os.Pipe, whose reads wait in the netpoller), on a locked thread
//     whose tid is printed ("reader_tid N");
//   - a channel receive, a sync.Mutex, a time.Sleep;
//   - a coroutine (iter.Pull), which the runtime creates waiting
//     (GoCreateBlocked) and switches to (GoSwitch).
//
// Usage: v2shapes TRACE_OUT [HOLD_MS]
package main

import (
	"fmt"
	"iter"
	"os"
	"runtime"
	"runtime/trace"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hold := 2500 * time.Millisecond
	if len(os.Args) > 2 {
		ms, _ := strconv.Atoi(os.Args[2])
		hold = time.Duration(ms) * time.Millisecond
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Fprintln(os.Stderr, "pipe:", err)
		os.Exit(1)
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ch := make(chan int)
	tidc := make(chan int)
	wg.Add(4)
	go func() { // a blocking syscall on its own thread
		defer wg.Done()
		runtime.LockOSThread()
		tidc <- syscall.Gettid()
		var b [1]byte
		if _, err := syscall.Read(p[0], b[:]); err != nil {
			fmt.Fprintln(os.Stderr, "read:", err)
			os.Exit(1)
		}
	}()
	fmt.Println("reader_tid", <-tidc)
	go func() { // a channel receive
		defer wg.Done()
		<-ch
	}()
	mu.Lock()
	go func() { // a mutex
		defer wg.Done()
		mu.Lock()
		mu.Unlock()
	}()
	go func() { // a sleep
		defer wg.Done()
		time.Sleep(hold)
	}()
	next, stop := iter.Pull(func(yield func(int) bool) { // a coroutine
		for i := 0; i < 3 && yield(i); i++ {
		}
	})
	next()
	stop()
	time.Sleep(hold)
	syscall.Write(p[1], []byte{1})
	ch <- 1
	mu.Unlock()
	wg.Wait()
	trace.Stop()
	f.Close()
	fmt.Println("done")
}
