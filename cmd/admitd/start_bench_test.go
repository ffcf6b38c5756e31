package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkBinaryStartToReady starts the built binary, as a user would, and
// measures the time from exec until /readyz answers 200, on a fresh data
// directory and on a restart over an existing one; it also reports the
// server's CPU time at that moment and the time `admitd version` takes.
// ADMITD_BENCH_BINARY names a binary to run instead of building this one
// (to compare two builds side by side, alternating runs).
func BenchmarkBinaryStartToReady(b *testing.B) {
	bin := buildBinary(b)
	b.Run("version", func(b *testing.B) {
		var cpu time.Duration
		for i := 0; i < b.N; i++ {
			cmd := exec.Command(bin, "version")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("admitd version: %v\n%s", err, out)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
	})
	for _, fresh := range []bool{true, false} {
		b.Run(fmt.Sprintf("fresh=%v", fresh), func(b *testing.B) {
			dir := b.TempDir()
			if !fresh {
				stop := startUntilReady(b, bin, dir)
				stop()
			}
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				data := dir
				if fresh {
					data = filepath.Join(dir, strconv.Itoa(i))
				}
				stop := startUntilReady(b, bin, data)
				b.StopTimer()
				cpu += stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
		})
	}
}

// buildBinary builds admitd into a temporary directory (or returns
// ADMITD_BENCH_BINARY).
func buildBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("ADMITD_BENCH_BINARY"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "admitd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startUntilReady starts `admitd serve` on dataDir and a free port and
// polls /readyz every millisecond until it answers 200. The returned stop
// function ends the server and returns the CPU time it had used when it
// was ready.
func startUntilReady(b *testing.B, bin, dataDir string) (stop func() time.Duration) {
	b.Helper()
	port := freePort(b)
	cmd := exec.Command(bin, "serve", "--data-dir", dataDir, "--secure-port", strconv.Itoa(port))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: time.Second}
	defer client.CloseIdleConnections()
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			b.Fatalf("admitd not ready after 30 s:\n%s", stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
	cpu := processCPUOf(cmd.Process.Pid)
	return func() time.Duration {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		return cpu
	}
}

func freePort(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// processCPUOf reads a process's user and system CPU time from
// /proc/<pid>/stat (0 where /proc is absent).
func processCPUOf(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may
	// hold spaces: utime and stime are the 12th and 13th of them.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}
