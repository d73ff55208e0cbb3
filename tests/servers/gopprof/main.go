// gopprof: a small net/http server with net/http/pprof for record_gomerge.sh
// (`record --go-trace` fetches /debug/pprof/trace from it).  It listens on
// the loopback address given as its one argument, prints "ready" once it
// accepts connections, and does a little work per request (a hash over a
// buffer) so that a CPU hog beside it preempts goroutines while they run.
package main

import (
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gopprof 127.0.0.1:PORT")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gopprof:", err)
		os.Exit(1)
	}
	buf := make([]byte, 64<<10)
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256(buf)
		for i := 0; i < 3; i++ {
			sum = sha256.Sum256(append(buf[:0:0], sum[:]...))
		}
		fmt.Fprintf(w, "%x\n", sum[:4])
	})
	fmt.Println("ready")
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, "gopprof:", err)
		os.Exit(1)
	}
}
