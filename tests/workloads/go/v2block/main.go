// v2block: goroutines blocking on channels, a mutex, a select, a
// sync.Cond and sleeps, traced by runtime/trace (Go 1.22+: v2).
// Usage: v2block TRACE_OUT [ROUNDS]
package main

import (
	"fmt"
	"os"
	"runtime/trace"
	"strconv"
	"sync"
	"time"
)

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rounds := 2000
	if len(os.Args) > 2 {
		rounds, _ = strconv.Atoi(os.Args[2])
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	ping, pong := make(chan int), make(chan int)
	wg.Add(2)
	go func() { // channel ping-pong
		defer wg.Done()
		for i := 0; i < rounds; i++ {
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
	var mu sync.Mutex
	total := 0
	for w := 0; w < 4; w++ { // mutex contention
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				mu.Lock()
				total++
				for j := 0; j < 200; j++ {
					total += j & 1
				}
				mu.Unlock()
			}
		}()
	}
	tick := make(chan struct{})
	done := make(chan struct{})
	wg.Add(1)
	go func() { // select on two channels
		defer wg.Done()
		for {
			select {
			case <-tick:
			case <-done:
				return
			}
		}
	}()
	cond := sync.NewCond(&sync.Mutex{})
	ready := 0
	wg.Add(1)
	go func() { // sync.Cond waiter
		defer wg.Done()
		cond.L.Lock()
		for ready < 20 {
			cond.Wait()
		}
		cond.L.Unlock()
	}()
	for i := 0; i < 20; i++ {
		time.Sleep(200 * time.Microsecond)
		tick <- struct{}{}
		cond.L.Lock()
		ready++
		cond.L.Unlock()
		cond.Signal()
	}
	close(done)
	wg.Wait()
	trace.Stop()
	f.Close()
	fmt.Println("total", total)
}
