package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/admitd/admitd/pkg/storage"
)

// The write-ahead log makes a write durable with one append and one
// fdatasync, where a bbolt commit costs several page writes and two
// fdatasyncs. It holds the batches acknowledged since the last checkpoint;
// a checkpoint moves them into the bbolt file and empties the log.
//
// A record is one committed batch:
//
//	len(payload) uint32 LE | CRC-32C(payload) uint32 LE | payload
//	payload: first revision uvarint | count uvarint | count × (len uvarint | event)
//
// with events encoded as in the log bucket (encodeEvent). Recovery reads
// records while they check and continue the revisions without a gap; a torn
// last record (a crash during its write, so never acknowledged) ends it.
type wal struct {
	f    *os.File
	size int64 // bytes of whole records
	// broken is set when the file may hold a partial record that could not
	// be removed: later appends could not be recovered, so none are made.
	broken error
}

const walHeader = 8

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// walBatch is a recovered record.
type walBatch struct {
	first  int64
	events []storage.Event
}

// openWAL opens or creates the log at path and returns its records.
func openWAL(path string) (*wal, []walBatch, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	batches, err := decodeWAL(data)
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return &wal{f: f, size: int64(len(data))}, batches, nil
}

// decodeWAL decodes the valid records of data, stopping at the first that
// is torn, fails its checksum or does not continue the revisions.
func decodeWAL(data []byte) ([]walBatch, error) {
	var batches []walBatch
	for len(data) >= walHeader {
		n := binary.LittleEndian.Uint32(data)
		sum := binary.LittleEndian.Uint32(data[4:])
		if uint64(len(data)-walHeader) < uint64(n) {
			break
		}
		payload := data[walHeader : walHeader+int(n)]
		if crc32.Checksum(payload, crcTable) != sum {
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

func encodeWALRecord(first int64, events []storage.Event) []byte {
	payload := binary.AppendUvarint(nil, uint64(first))
	payload = binary.AppendUvarint(payload, uint64(len(events)))
	for _, ev := range events {
		payload = appendBytes(payload, encodeEvent(ev))
	}
	rec := make([]byte, walHeader, walHeader+len(payload))
	binary.LittleEndian.PutUint32(rec, uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(payload, crcTable))
	return append(rec, payload...)
}

// append writes events (revisions first, first+1, …) as one record and
// syncs it. On failure the record is removed again, so that an error means
// the batch is not in the log.
func (w *wal) append(first int64, events []storage.Event) error {
	if w.broken != nil {
		return w.broken
	}
	rec := encodeWALRecord(first, events)
	_, err := w.f.WriteAt(rec, w.size)
	if err == nil {
		err = fdatasync(w.f)
	}
	if err != nil {
		w.undo(err)
		return err
	}
	w.size += int64(len(rec))
	return nil
}

// undo cuts a failed append off the end of the log.
func (w *wal) undo(cause error) {
	if err := w.f.Truncate(w.size); err != nil {
		w.broken = fmt.Errorf("write-ahead log unusable after %v: %w", cause, err)
		return
	}
	if err := fdatasync(w.f); err != nil {
		w.broken = fmt.Errorf("write-ahead log unusable after %v: %w", cause, err)
	}
}

// reset empties the log once its records are in the bbolt file. If the
// truncation does not reach the disk, recovery skips the records the file
// already holds, by revision.
func (w *wal) reset() error {
	if w.broken != nil {
		return w.broken
	}
	if err := w.f.Truncate(0); err != nil {
		return err
	}
	w.size = 0
	return nil
}

func (w *wal) close() error {
	return w.f.Close()
}

var errWALGap = errors.New("bolt: write-ahead log does not continue the data file")
