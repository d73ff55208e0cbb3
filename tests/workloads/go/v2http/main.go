// v2http: a net/http server on 127.0.0.1 (random port) under a small load
// from Go clients in the same process, traced by runtime/trace (Go 1.22+
// writes the v2 format) with the CPU profiler on (its samples go into the
// trace).  Usage: v2http TRACE_OUT [REQUESTS]
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
)

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n := 2000
	if len(os.Args) > 2 {
		n, _ = strconv.Atoi(os.Args[2])
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	hits := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		io.WriteString(w, "hello from v2http\n")
	})}
	go srv.Serve(ln)
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	url := "http://" + ln.Addr().String() + "/"
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &http.Client{}
			for i := 0; i < n/4; i++ {
				resp, err := cl.Get(url)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	trace.Stop()
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println("requests", hits)
}
