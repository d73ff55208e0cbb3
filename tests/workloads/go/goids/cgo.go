//go:build cgo

package main

// With cgo the binary is linked by the system linker, against libc, and g
// lives in libc's static TLS block at runtime.tlsg's offset, not at -8.

// static int gt_goids_cgo(void) { return 1; }
import "C"

var cgoLinked = C.gt_goids_cgo()
