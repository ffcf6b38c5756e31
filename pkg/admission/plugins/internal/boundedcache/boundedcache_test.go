package boundedcache

import "testing"

// TestCacheStartsOverWhenFull: values are found until the cache holds Max
// of them; the next store forgets the others.
func TestCacheStartsOverWhenFull(t *testing.T) {
	c := &Cache[string, int]{Max: 2}
	c.Store("a", 1)
	c.Store("b", 2)
	c.Store("b", 3) // a replacement does not count twice
	if v, ok := c.Load("b"); !ok || v != 3 || c.Len() != 2 {
		t.Fatalf("Load(b) = %v, %v with %d entries", v, ok, c.Len())
	}
	c.Store("c", 4)
	if _, ok := c.Load("a"); ok || c.Len() != 1 {
		t.Errorf("a full cache kept a (%d entries)", c.Len())
	}
	if v, ok := c.Load("c"); !ok || v != 4 {
		t.Errorf("Load(c) = %v, %v", v, ok)
	}
}
