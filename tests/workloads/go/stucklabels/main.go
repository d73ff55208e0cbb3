// stucklabels: a Go program whose goroutine's pprof labels lie where a
// read never ends, for daemon_stuck_reads (docs/security.md: gotraced
// reads a goroutine's labels' map from /proc/PID/mem, off its event loop).
//
// It maps FILE (a FUSE file whose reads are never answered:
// tests/integration/stall_fuse.py's MNT/data) without touching it, and
// sets its main goroutine's labels to a map whose header is real
// memory (count 1, a seed) and whose bucket is the mapping's first page:
// whoever reads the labels waits on that page's fault for as long as the
// file system does not answer.  The goroutine then sleeps in raw
// nanosleep calls (each a switch-out while it runs, which BPF names with
// its labels) for MILLISECONDS, never reading the labels itself.
//
// The map is Go 1.19 to 1.23's runtime.hmap (docs/mapping.md), put in
// place of the one pprof.WithLabels made: its context is a
// *context.valueCtx{Context, key, val any} whose val is the *labelMap.
//
// Usage: stucklabels FILE MILLISECONDS
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

type hmap struct {
	count     int
	flags, b  uint8
	noverflow uint16
	hash0     uint32
	buckets   uintptr // not a Go pointer: the garbage collector leaves it
	old       uintptr
	nevacuate uintptr
	extra     uintptr
}

func main() {
	ms, _ := strconv.Atoi(os.Args[2])
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 65536, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		panic(err)
	}
	fake := &hmap{count: 1, hash0: 0x5eed, buckets: uintptr(unsafe.Pointer(&mem[0]))}
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("k", "v"))
	vc := (*[2]unsafe.Pointer)(unsafe.Pointer(&ctx))[1]
	lm := (*[2]unsafe.Pointer)(unsafe.Add(vc, 32))[1]
	*(*unsafe.Pointer)(lm) = unsafe.Pointer(fake)
	pprof.SetGoroutineLabels(ctx)
	fmt.Println("ready")
	ts := syscall.Timespec{Nsec: 10e6}
	for end := time.Now().Add(time.Duration(ms) * time.Millisecond); time.Now().Before(end); {
		syscall.Nanosleep(&ts, nil)
	}
}
