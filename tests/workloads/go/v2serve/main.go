// v2serve: a net/http server on 127.0.0.1 (random port) for an outside
// load generator (wrk), tracing itself with runtime/trace (Go 1.22+ writes
// the v2 format).  It prints "port N" once it listens, traces for SECONDS
// from then, stops the trace and exits.  Usage: v2serve TRACE_OUT SECONDS
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/trace"
	"strconv"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: v2serve TRACE_OUT SECONDS")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil || secs <= 0 {
		fmt.Fprintln(os.Stderr, "v2serve: SECONDS:", os.Args[2])
		os.Exit(2)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var hits atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "hello from v2serve\n")
	})}
	go srv.Serve(ln)
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)
	time.Sleep(time.Duration(secs * float64(time.Second)))
	trace.Stop()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("requests", hits.Load())
}
