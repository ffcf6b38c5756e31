package main

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// durableLog is the least a server that keeps what it acknowledges can add
// to the floor: each create's body is appended to one file and made
// durable (fdatasync) before the create is answered. One writer goroutine
// takes every append already waiting into one write and one sync (group
// commit, as admitd's embedded store does), so concurrent clients share a
// sync. Nothing is indexed or ever read back; the file is rewritten from its
// start once it reaches maxLogBytes, so that its blocks are reused (a sync
// that does not grow the file is cheaper on ext4, as admitd's log reuses its
// blocks).
type durableLog struct {
	f       *os.File
	size    int64
	appends chan *pendingAppend
}

type pendingAppend struct {
	data []byte
	err  error
	done chan struct{}
}

const maxLogBytes = 64 << 20

func openDurableLog(dir string) (*durableLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, "h2floor.log"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	l := &durableLog{f: f, appends: make(chan *pendingAppend, 1024)}
	go l.run()
	return l, nil
}

// append returns once data is durable.
func (l *durableLog) append(data []byte) error {
	p := &pendingAppend{data: data, done: make(chan struct{})}
	l.appends <- p
	<-p.done
	return p.err
}

func (l *durableLog) run() {
	var batch []*pendingAppend
	var buf []byte
	for p := range l.appends {
		batch = append(batch[:0], p)
		runtime.Gosched() // let the writers woken by the last sync queue up
	gather:
		for {
			select {
			case q := <-l.appends:
				batch = append(batch, q)
			default:
				break gather
			}
		}
		buf = buf[:0]
		for _, q := range batch {
			buf = append(buf, q.data...)
		}
		err := l.write(buf)
		for _, q := range batch {
			q.err = err
			close(q.done)
		}
	}
}

func (l *durableLog) write(buf []byte) error {
	if l.size+int64(len(buf)) > maxLogBytes {
		l.size = 0
	}
	if _, err := l.f.WriteAt(buf, l.size); err != nil {
		return err
	}
	l.size += int64(len(buf))
	return syscall.Fdatasync(int(l.f.Fd()))
}
