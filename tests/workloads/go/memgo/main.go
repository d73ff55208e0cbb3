// memgo: a small Go program for the memory tests.  It allocates and drops
// slices in phases (its RSS grows), keeps several goroutines busy, and
// follows the workload protocol of tests/workloads/wl_common.h: prints
// `pid PID`, `ready`, with --wait starts on a byte from stdin, prints
// `done`, then exits on a second byte or EOF.
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"sync"
)

var keep [][]byte

func grow(mib int) {
	for i := 0; i < mib; i++ {
		b := make([]byte, 1<<20)
		for j := range b {
			b[j] = byte(j)
		}
		keep = append(keep, b)
	}
}

func churn(wg *sync.WaitGroup) {
	defer wg.Done()
	total := 0
	for i := 0; i < 20000; i++ {
		s := make([]int, 64+i%512)
		total += len(s)
	}
	_ = total
}

func main() {
	wait := len(os.Args) > 1 && os.Args[1] == "--wait"
	in := bufio.NewReader(os.Stdin)
	fmt.Printf("pid %d\n", os.Getpid())
	fmt.Printf("ready\n")
	if wait {
		if _, err := in.ReadByte(); err != nil {
			return
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go churn(&wg)
	}
	grow(48)
	wg.Wait()
	keep = keep[:len(keep)/2]
	runtime.GC()
	grow(16)
	fmt.Printf("done\n")
	if wait {
		in.ReadByte()
	}
}
