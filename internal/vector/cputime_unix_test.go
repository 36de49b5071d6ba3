//go:build unix

package vector

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used. Benchmarks report it next
// to wall time because the development machine is shared: wall time counts
// the time other processes held the cores, CPU time does not.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
