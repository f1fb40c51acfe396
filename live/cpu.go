package live

import (
	"fmt"
	"io"

	"github.com/nexar-go/nexar-go/sweep"
)

// cpuUsage is a process's CPU and scheduling counts (processCPU).
type cpuUsage struct {
	user, sys             float64 // seconds
	minflt, nvcsw, nivcsw int64
}

// writeCPU writes to w a line for point p: what the process used between
// u0 and u1 over n iterations, per iteration. The line names the point
// as the results do, then the counts as key=value.
func writeCPU(w io.Writer, p sweep.Point, n int64, u0, u1 cpuUsage) {
	per := func(d float64) float64 { return d / float64(n) }
	fmt.Fprintf(w, "%s %s world=%d bytes=%d iters=%d cpu_ms=%.3f user_ms=%.3f sys_ms=%.3f minflt=%.1f nvcsw=%.1f nivcsw=%.1f\n",
		p.Collective.Name, p.VariantName(), p.World, p.UsedBytes(), n,
		per(u1.user+u1.sys-u0.user-u0.sys)*1e3, per(u1.user-u0.user)*1e3, per(u1.sys-u0.sys)*1e3,
		per(float64(u1.minflt-u0.minflt)), per(float64(u1.nvcsw-u0.nvcsw)), per(float64(u1.nivcsw-u0.nivcsw)))
}
