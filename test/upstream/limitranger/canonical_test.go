package limitranger

import "testing"

func TestCanonical(t *testing.T) {
	const p = `403 Forbidden "pods \"p\" is forbidden: [`
	a := p + `minimum cpu usage per Container is 1, but request is 0, minimum memory usage per Container is 1Mi.  No request is specified, maximum cpu usage per Container is 2.  No limit is specified]"`
	reordered := p + `minimum memory usage per Container is 1Mi.  No request is specified, minimum cpu usage per Container is 1, but request is 0, maximum cpu usage per Container is 2.  No limit is specified]"`
	kindsSwapped := p + `maximum cpu usage per Container is 2.  No limit is specified, minimum cpu usage per Container is 1, but request is 0, minimum memory usage per Container is 1Mi.  No request is specified]"`
	otherText := p + `minimum cpu usage per Container is 1, but request is 0, minimum memory usage per Container is 2Mi.  No request is specified, maximum cpu usage per Container is 2.  No limit is specified]"`
	if canonical(a) != canonical(reordered) {
		t.Errorf("canonical differs for a reordering within a run:\n%s\n%s", canonical(a), canonical(reordered))
	}
	for _, other := range []string{kindsSwapped, otherText} {
		if canonical(a) == canonical(other) {
			t.Errorf("canonical(%s) = canonical(%s), want different", a, other)
		}
	}
}
