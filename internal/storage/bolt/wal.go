package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/admitd/admitd/pkg/storage"
)

// The write-ahead log makes a write durable with one append and one
// fdatasync, where a bbolt commit costs several page writes and two
// fdatasyncs. It holds the batches acknowledged since the last checkpoint;
// a checkpoint moves them into the bbolt file. The log is two files written
// in turn, so that writes go on while a checkpoint runs (wal_files.go); a
// wal is one of them.
//
// A record is one committed batch:
//
//	len(payload) uint32 LE | CRC-32C(epoch | payload) uint32 LE | payload
//	payload: first revision uvarint | count uvarint | count × (len uvarint | event)
//
// The epoch (8 bytes LE, not stored in the record; 0 means none, for logs
// written before epochs) is a random number the data file's meta bucket
// holds: each checkpoint's transaction makes the epoch the writer turned to
// current and picks the next one. A record
// checks only under the epoch it was written in, so that records a
// checkpoint left behind (see reset), or a log left by another data file,
// are never taken for the current log's.
//
// with events encoded as in the log bucket (encodeEvent). Recovery reads
// records while they check and continue the revisions without a gap; a torn
// last record (a crash during its write, so never acknowledged), including
// one the file system left zero-filled, ends it, and so does the first stale
// record a reset left behind, of an earlier epoch.
type wal struct {
	f     *os.File
	size  int64  // bytes of whole records
	epoch uint64 // the epoch records are written in
	// broken is set when the file may hold a partial record that could not
	// be removed: later appends could not be recovered, so none are made.
	broken error
}

const walHeader = 8

// crcTable is the Castagnoli table of the records' checksums, made on
// first use (not when a program that links this package starts).
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// walBatch is a recovered record.
type walBatch struct {
	first  int64
	events []storage.Event
}

// openWALFile opens or creates one log file at path and reads it whole.
// (The caller makes a new file's directory entry durable.)
func openWALFile(path string) (*wal, []byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return &wal{f: f, size: int64(len(data))}, data, nil
}

// decodeWAL decodes the valid records of data, stopping at the first that
// is torn, fails its checksum under epoch or does not continue the
// revisions.
func decodeWAL(data []byte, epoch uint64) ([]walBatch, error) {
	var batches []walBatch
	for len(data) >= walHeader {
		n := binary.LittleEndian.Uint32(data)
		sum := binary.LittleEndian.Uint32(data[4:])
		if n == 0 || uint64(len(data)-walHeader) < uint64(n) {
			break // torn: a record is never empty (and an empty one's CRC is 0)
		}
		payload := data[walHeader : walHeader+int(n)]
		if recordCRC(epoch, payload) != sum {
			break
		}
		b, err := decodeWALPayload(payload)
		if err != nil {
			return nil, err
		}
		if k := len(batches); k > 0 {
			prev := batches[k-1]
			if b.first != prev.first+int64(len(prev.events)) {
				break
			}
		}
		batches = append(batches, b)
		data = data[walHeader+int(n):]
	}
	return batches, nil
}

func decodeWALPayload(p []byte) (walBatch, error) {
	d := decoder{b: p}
	b := walBatch{first: int64(d.uvarint())}
	count := d.uvarint()
	for i := uint64(0); i < count && d.err == nil; i++ {
		raw := d.bytes()
		if d.err != nil {
			break
		}
		ev, err := decodeEvent(b.first+int64(i), raw)
		if err != nil {
			return walBatch{}, fmt.Errorf("write-ahead log: %w", err)
		}
		b.events = append(b.events, ev)
	}
	if d.err != nil {
		return walBatch{}, fmt.Errorf("write-ahead log: %w", d.err)
	}
	return b, nil
}

// recordCRC is the checksum of a record's payload written in epoch.
func recordCRC(epoch uint64, payload []byte) uint32 {
	if epoch == 0 {
		return crc32.Checksum(payload, crcTable())
	}
	var e [8]byte
	binary.LittleEndian.PutUint64(e[:], epoch)
	return crc32.Update(crc32.Checksum(e[:], crcTable()), crcTable(), payload)
}

func encodeWALRecord(epoch uint64, first int64, events []storage.Event) []byte {
	rec := make([]byte, walHeader, walHeader+2*binary.MaxVarintLen64+walPayloadHint(events))
	rec = binary.AppendUvarint(rec, uint64(first))
	rec = binary.AppendUvarint(rec, uint64(len(events)))
	for _, ev := range events {
		// appendBytes(rec, encodeEvent(ev)) without the event's own copy
		rec = binary.AppendUvarint(rec, uint64(eventSize(ev)))
		rec = appendEvent(rec, ev)
	}
	payload := rec[walHeader:]
	binary.LittleEndian.PutUint32(rec, uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:], recordCRC(epoch, payload))
	return rec
}

// walPayloadHint is about the encoded size of events, so that a record is
// usually one allocation.
func walPayloadHint(events []storage.Event) int {
	n := 0
	for _, ev := range events {
		n += 32 + len(ev.KV.Key) + len(ev.KV.Value)
		if ev.PrevKV != nil {
			n += 24 + len(ev.PrevKV.Value)
		}
	}
	return n
}

// errOutcomeUnknown wraps a failed fdatasync of the log: the record may or
// may not have reached the disk, so the writes of the batch may reappear
// after a restart. The log accepts nothing more (as etcd stops on a failed
// WAL sync); what reached the disk is the truth after a restart.
var errOutcomeUnknown = errors.New("bolt: outcome unknown, syncing the write-ahead log failed; restart admitd")

// append writes events (revisions first, first+1, …) as one record and
// syncs it. When the write itself fails, the partial record is cut off
// again, so that the error means the batch is not in the log; when the
// sync fails, the error wraps errOutcomeUnknown.
func (w *wal) append(first int64, events []storage.Event) error {
	if w.broken != nil {
		return w.broken
	}
	rec := encodeWALRecord(w.epoch, first, events)
	if _, err := w.f.WriteAt(rec, w.size); err != nil {
		w.undo(err)
		return err
	}
	if err := fdatasync(w.f); err != nil {
		w.broken = fmt.Errorf("%w: %w", errOutcomeUnknown, err)
		return w.broken
	}
	w.size += int64(len(rec))
	return nil
}

// undo cuts a failed write off the end of the log. A partial record does not
// pass its checksum, so if it cannot be cut, no later record could be
// recovered past it: the log then accepts nothing more.
func (w *wal) undo(cause error) {
	err := w.f.Truncate(w.size)
	if err == nil {
		err = fdatasync(w.f)
	}
	if err != nil {
		w.broken = fmt.Errorf("bolt: the write-ahead log is unusable after %v: %w", cause, err)
	}
}

// reset empties the log once its records are in the bbolt file, whose
// transaction also moved to epoch, by writing the next record at its start.
// The file keeps its size and its blocks: an append that overwrites written
// blocks is synced without any file-system metadata change, about half the
// cost of a sync that grows the file (ext4). What lies past the new records
// is stale, of an earlier epoch: it fails its checksum and ends recovery.
// Nothing stale is overwritten before the checkpoint that holds it is
// durable.
func (w *wal) reset(epoch uint64) {
	if w.broken == nil {
		w.size, w.epoch = 0, epoch
	}
}

// clear empties the log file on a clean shutdown: no need to keep blocks
// for appends, and the file says at a glance that nothing is pending.
func (w *wal) clear() error {
	if w.broken != nil {
		return nil
	}
	if err := w.f.Truncate(0); err != nil {
		return err
	}
	// durable, so that a power loss cannot bring back records of the
	// epoch the next start writes the other file in
	if err := fdatasync(w.f); err != nil {
		return err
	}
	w.size = 0
	return nil
}

func (w *wal) close() error {
	return w.f.Close()
}

var errWALGap = errors.New("bolt: the write-ahead log does not continue the data file")
