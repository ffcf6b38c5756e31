package main

import (
	"fmt"
	"time"
)

// report prints each process's CPU and memory over a phase: per pod, and
// as a RESULT line. cpuFirst is each process's CPU until the first
// milestone (all pods created), or nil. RESULT lines of one run share
// its start time; first_seconds and first_cpu_ms are at the first milestone.
func (b *bench) report(phase string, start time.Time, took, first time.Duration, use []usage, cpuFirst []int64) {
	n := float64(b.total())
	for i, p := range b.procs {
		u := use[i]
		cpu := u.cpuEnd - u.cpuStart
		until, cpuUntil := "", cpu
		if cpuFirst != nil && first != took {
			until, cpuUntil = fmt.Sprintf(" (%.2f until all created)", float64(cpuFirst[i])/n), cpuFirst[i]
		}
		fmt.Printf("  %-24s cpu %6.2f s = %6.2f ms/pod%s   RSS %d -> peak %d MiB (%+.1f KiB/pod)\n",
			p.name, float64(cpu)/1000, float64(cpu)/n, until, u.rssStart/1024, u.rssPeak/1024, float64(u.rssPeak-u.rssStart)/n)
		fmt.Printf("RESULT server=%s run=%d phase=%s pods=%d seconds=%.3f first_seconds=%.3f proc=%s cpu_ms=%d first_cpu_ms=%d rss_start_kib=%d rss_peak_kib=%d\n",
			b.server, start.UnixMilli(), phase, b.total(), took.Seconds(), first.Seconds(), p.name, cpu, cpuUntil, u.rssStart, u.rssPeak)
	}
}
