package bolt

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/admitd/admitd/pkg/storage"
)

// The write-ahead log is two files, written in turn, so that a checkpoint
// runs beside the writes instead of stopping them. The data file's meta
// bucket names two epochs: the current one, of the records after its
// revision, and the next one. A checkpoint begins by turning the writer to
// the other file, in the next epoch, and then moves the changes up to that
// point into the data file in a transaction that makes the next epoch the
// current one and picks a new next one. Until that transaction commits,
// the changes after the data file's revision are the current epoch's
// records in one file followed by the next epoch's in the other; once it
// has, the first file holds nothing needed and is the one written over at
// the following checkpoint.
//
// A checkpoint that fails leaves the writer in the file it turned to; the
// next attempt then checkpoints without turning (the other file's records
// are still needed), and its transaction keeps the writer's epoch current.

// walSuffixes name the two log files beside the data file; the first is the
// single log of earlier versions.
var walSuffixes = [2]string{".wal", ".wal2"}

// walFiles is the pair of log files and the one the writer appends to.
type walFiles struct {
	files  [2]*wal
	active int
}

// append writes one record of events to the active file and syncs it.
func (w *walFiles) append(first int64, events []storage.Event) error {
	return w.files[w.active].append(first, events)
}

// epoch is the epoch the writer appends in.
func (w *walFiles) epoch() uint64 { return w.files[w.active].epoch }

// turn makes the other file the active one, written from its start in
// epoch. A file that cannot be written (a failed sync) stays active.
func (w *walFiles) turn(epoch uint64) {
	if w.files[w.active].broken != nil {
		return
	}
	w.active = 1 - w.active
	w.files[w.active].reset(epoch)
}

// rewind writes the active file from its start again, in epoch: the data
// file holds every record of both files.
func (w *walFiles) rewind(epoch uint64) { w.files[w.active].reset(epoch) }

// clear empties both files on a clean shutdown.
func (w *walFiles) clear() error {
	return errors.Join(w.files[0].clear(), w.files[1].clear())
}

func (w *walFiles) close() error {
	return errors.Join(w.files[0].close(), w.files[1].close())
}

// openWALFiles opens both log files beside the data file at path and
// returns the changes they hold after revision base: the records of epoch
// cur, in whichever file holds them, then those of epoch next in the
// other. The first file is active.
func openWALFiles(path string, base int64, cur, next uint64) (*walFiles, []storage.Event, error) {
	w := &walFiles{}
	var data [2][]byte
	for i, suffix := range walSuffixes {
		var err error
		if w.files[i], data[i], err = openWALFile(path + suffix); err != nil {
			if i == 1 {
				_ = w.files[0].close()
			}
			return nil, nil, err
		}
	}
	// A new file's directory entry must be durable before the first
	// acknowledged append relies on it.
	if err := syncDir(filepath.Dir(path)); err != nil {
		_ = w.close()
		return nil, nil, err
	}
	events, err := recoverRecords(data, base, cur, next)
	if err != nil {
		_ = w.close()
		return nil, nil, fmt.Errorf("%s%s, %s: %w", path, walSuffixes[0], walSuffixes[1], err)
	}
	return w, events, nil
}

// empty says whether both files were empty when opened.
func (w *walFiles) empty() bool { return w.files[0].size == 0 && w.files[1].size == 0 }

// recoverRecords reads the changes after base from the two files' data:
// cur's records in whichever file holds them, then next's in the other.
func recoverRecords(data [2][]byte, base int64, cur, next uint64) ([]storage.Event, error) {
	var runs [2][]walBatch
	for i := range data {
		var err error
		if runs[i], err = decodeWAL(data[i], cur); err != nil {
			return nil, err
		}
	}
	holder := 0
	if len(runs[0]) == 0 && len(runs[1]) > 0 {
		holder = 1
	}
	if len(runs[0]) > 0 && len(runs[1]) > 0 {
		return nil, fmt.Errorf("%w: both files hold records of one epoch", errWALGap)
	}
	batches := runs[holder]
	if next != 0 {
		// the next epoch's records are in the file cur's are not in, or,
		// when cur has none, in either
		candidates := []int{1 - holder}
		if len(batches) == 0 {
			candidates = []int{0, 1}
		}
		for _, i := range candidates {
			more, err := decodeWAL(data[i], next)
			if err != nil {
				return nil, err
			}
			if len(more) > 0 {
				batches = append(batches, more...)
				break
			}
		}
	}
	return eventsAfter(batches, base)
}

// eventsAfter returns the events of batches after revision base, which
// must continue base and one another without a gap.
func eventsAfter(batches []walBatch, base int64) ([]storage.Event, error) {
	var events []storage.Event
	for _, b := range batches {
		for i, ev := range b.events {
			if b.first+int64(i) > base {
				events = append(events, ev)
			}
		}
	}
	for i, ev := range events {
		switch {
		case i == 0 && ev.KV.ModRevision != base+1:
			return nil, fmt.Errorf("%w: it starts at revision %d, the file is at %d", errWALGap, ev.KV.ModRevision, base)
		case ev.KV.ModRevision != base+1+int64(i):
			return nil, fmt.Errorf("%w: revision %d follows %d", errWALGap, ev.KV.ModRevision, base+int64(i))
		}
	}
	return events, nil
}
