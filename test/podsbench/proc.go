package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times (100 on Linux).
const clockTicks = 100

// proc is a measured process.
type proc struct {
	name string
	pid  int
}

// parseProcs parses name=pid,name=pid.
func parseProcs(s string) ([]proc, error) {
	var out []proc
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		name, pid, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(pid)
		if !ok || name == "" || err != nil || n <= 0 {
			return nil, fmt.Errorf("-procs: want name=pid, got %q", part)
		}
		out = append(out, proc{name: name, pid: n})
	}
	return out, nil
}

// cpuMillis is the CPU time (user+sys) the process has used, in ms.
func cpuMillis(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, fields[11], fields[12])
	}
	return (utime + stime) * 1000 / clockTicks, nil
}

// rssKiB is the process's resident set (VmRSS), in KiB.
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

// usage is a process's CPU and memory over one phase.
type usage struct {
	cpuStart, cpuEnd int64 // ms
	rssStart         int64 // KiB
	rssPeak          int64 // KiB, sampled every 100 ms
}

// meter measures processes from start to stop: CPU at both ends, RSS
// peaks sampled meanwhile.
type meter struct {
	procs []proc
	done  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	use   []usage
	err   error
}

func startMeter(procs []proc) *meter {
	m := &meter{procs: procs, done: make(chan struct{}), use: make([]usage, len(procs))}
	for i, p := range procs {
		m.use[i].cpuStart, m.err = cpuMillis(p.pid)
		m.use[i].rssStart, _ = rssKiB(p.pid)
		m.use[i].rssPeak = m.use[i].rssStart
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *meter) sample() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.procs {
		if r, err := rssKiB(p.pid); err == nil {
			m.use[i].rssPeak = max(m.use[i].rssPeak, r)
		}
	}
}

// cpuNow is each process's CPU used since start, in ms.
func (m *meter) cpuNow() []int64 {
	out := make([]int64, len(m.procs))
	for i, p := range m.procs {
		c, _ := cpuMillis(p.pid)
		out[i] = c - m.use[i].cpuStart
	}
	return out
}

// stop ends the sampling and returns each process's usage.
func (m *meter) stop() ([]usage, error) {
	close(m.done)
	m.wg.Wait()
	m.sample()
	for i, p := range m.procs {
		c, err := cpuMillis(p.pid)
		if err != nil && m.err == nil {
			m.err = err
		}
		m.use[i].cpuEnd = c
	}
	return m.use, m.err
}
