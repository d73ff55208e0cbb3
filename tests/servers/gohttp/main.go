// gohttp: a small net/http server for record_servers.sh, built with
// -ldflags='-s -w' (no symbol table: what a production Go binary often
// is).  It listens on the loopback address given as its one argument and
// prints "ready" once it accepts connections.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gohttp 127.0.0.1:PORT")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gohttp:", err)
		os.Exit(1)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})
	fmt.Println("ready")
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, "gohttp:", err)
		os.Exit(1)
	}
}
