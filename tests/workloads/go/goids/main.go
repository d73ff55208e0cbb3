// goids: goroutines that each know their own goroutine id, for
// record_goids (the goroutine ids gotraced reads from a Go thread).
//
// N worker goroutines, each locked to its own OS thread
// (runtime.LockOSThread), read their goid from runtime.Stack's header
// ("goroutine 42 [running]:") and their TID, print "goid TID START END"
// (CLOCK_MONOTONIC ns around their work) and spin for the given time with
// a short sleep now and then, so the kernel switches their threads out
// both by preemption (more spinners than CPUs) and by blocking.  While a
// worker is locked, its thread runs no other goroutine: every goroutine id
// the trace gives that thread between START and END is the worker's, or 0
// (the runtime's own g0/gsignal, in the scheduler or a signal handler).
//
// With GOIDS_TRACE=FILE set, the run's own runtime/trace goes to FILE
// (record_goids holds the ids gotraced read to it too: Go 1.22+ stamps
// it with nanotime, CLOCK_MONOTONIC, the clock of gotraced's trace).
//
// GOIDS_LINGER_MS=N: stay N ms after the workers end (the kernel matrix:
// an emulated guest's recorder reads the labels' maps late, and can only
// while the process lives).
//
// Usage: goids WORKERS MILLISECONDS
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

func goid() uint64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	n, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return n
}

// monotonic reads CLOCK_MONOTONIC, the clock of the trace's timestamps.
func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

var sink uint64

func main() {
	workers, _ := strconv.Atoi(os.Args[1])
	ms, _ := strconv.Atoi(os.Args[2])
	var wg sync.WaitGroup
	var mu sync.Mutex
	if path := os.Getenv("GOIDS_TRACE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			panic(err)
		}
		defer func() { trace.Stop(); f.Close() }()
	}
	// goroutines that are not locked, so the ids are not all small
	for i := 0; i < 50; i++ {
		go func() { time.Sleep(time.Hour) }()
	}
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil { // blocking, not the netpoller's
		panic(err)
	}
	go func() {
		runtime.LockOSThread()
		b := make([]byte, 64)
		for {
			if n, _ := syscall.Read(fds[0], b); n <= 0 {
				return
			}
		}
	}()
	for i := 0; i < workers; i++ {
		wg.Add(1)
		work := func(labels string) {
			defer wg.Done()
			runtime.LockOSThread()
			id, tid := goid(), syscall.Gettid()
			start := monotonic()
			end := start + int64(ms)*1000000
			x := uint64(0)
			one := []byte{1}
			for monotonic() < end {
				for j := 0; j < 200000; j++ {
					x = x*6364136223846793005 + 1
				}
				syscall.Write(fds[1], one)
				time.Sleep(200 * time.Microsecond)
			}
			mu.Lock()
			sink += x
			fmt.Printf("%d %d %d %d%s\n", id, tid, start, monotonic(), labels)
			mu.Unlock()
		}
		if i%2 == 1 {
			go work("")
			continue
		}
		n := strconv.Itoa(i)
		go pprof.Do(context.Background(), pprof.Labels("worker", n), func(context.Context) {
			work(" {worker=" + n + "}")
		})
	}
	wg.Wait()
	if linger, _ := strconv.Atoi(os.Getenv("GOIDS_LINGER_MS")); linger > 0 {
		time.Sleep(time.Duration(linger) * time.Millisecond)
	}
}
