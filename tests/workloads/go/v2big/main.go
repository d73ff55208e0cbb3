// v2big: a large Go 1.22+ (v2) runtime trace, for measuring what reading
// one costs (`gotracectl report`'s peak memory): many goroutines busy with
// channels, a mutex, syscalls, sleeps and short-lived goroutines, traced by
// runtime/trace until the file reaches SIZE_MB.
// Usage: v2big TRACE_OUT SIZE_MB
package main

import (
	"fmt"
	"os"
	"runtime/trace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

var stop atomic.Bool

// pingpong: two goroutines handing a value back and forth.
func pingpong(wg *sync.WaitGroup) {
	ping, pong := make(chan int), make(chan int)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			ping <- i
			<-pong
		}
		close(ping)
	}()
	go func() {
		defer wg.Done()
		for v := range ping {
			pong <- v
		}
	}()
}

// syscalls: small writes to /dev/null and reads of a pipe's other end.
func syscalls(wg *sync.WaitGroup, null *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := []byte("x")
		for !stop.Load() {
			null.Write(buf)
			w.Write(buf)
		}
		w.Close()
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 64)
		for {
			if _, err := r.Read(buf); err != nil {
				return
			}
		}
	}()
}

// locker: a contended mutex and short sleeps.
func locker(wg *sync.WaitGroup, mu *sync.Mutex, total *int) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			mu.Lock()
			*total++
			mu.Unlock()
			if i%64 == 0 {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
}

// spawner: short-lived goroutines, each sending once: 16 every
// millisecond, 1024 in all (what a reader keeps per goroutine stays small
// whatever the machine's speed).
func spawner(wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := make(chan int)
		for round := 0; round < 64 && !stop.Load(); round++ {
			for i := 0; i < 16; i++ {
				go func(v int) { c <- v }(i)
			}
			for i := 0; i < 16; i++ {
				<-c
			}
			time.Sleep(time.Millisecond)
		}
	}()
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: v2big TRACE_OUT SIZE_MB")
		os.Exit(2)
	}
	mb, err := strconv.Atoi(os.Args[2])
	if err != nil || mb <= 0 {
		fmt.Fprintln(os.Stderr, "v2big: bad SIZE_MB", os.Args[2])
		os.Exit(2)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	null, err := os.OpenFile("/dev/null", os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 0; i < 32; i++ {
		pingpong(&wg)
	}
	for i := 0; i < 8; i++ {
		syscalls(&wg, null)
		locker(&wg, &mu, &total)
	}
	for i := 0; i < 4; i++ {
		spawner(&wg)
	}
	for {
		time.Sleep(20 * time.Millisecond)
		if st, err := f.Stat(); err != nil || st.Size() >= int64(mb)<<20 {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	trace.Stop()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
