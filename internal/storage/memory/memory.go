// Package memory forwards to pkg/storage/memory, where the in-memory store
// now lives, for the server and tests that still import this path. New code
// imports github.com/admitd/admitd/pkg/storage/memory.
package memory

import "github.com/admitd/admitd/pkg/storage/memory"

// Store is memory.Store.
type Store = memory.Store

// New returns an empty store at revision 0.
func New() *Store { return memory.New() }
