//go:build !unix

package vector

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
