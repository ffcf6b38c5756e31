package limitranger

import "testing"

// TestAnnotationTextReusesTheLastOne: the same text gives the string made
// last time without allocating; another text gives its own.
func TestAnnotationTextReusesTheLastOne(t *testing.T) {
	c := &compiledRange{}
	a := []byte("LimitRanger plugin set: cpu request for container web")
	first := c.annotationText(a)
	if first != string(a) {
		t.Fatalf("annotationText = %q", first)
	}
	if n := testing.AllocsPerRun(10, func() { _ = c.annotationText(a) }); n != 0 {
		t.Errorf("the same text again allocates %v times", n)
	}
	b := []byte("LimitRanger plugin set: cpu request for container api")
	if got := c.annotationText(b); got != string(b) {
		t.Errorf("annotationText of another text = %q", got)
	}
	a[len(a)-1] = 'x' // the caller's buffer changes; the string made from it must not
	if first != "LimitRanger plugin set: cpu request for container web" {
		t.Errorf("a returned string changed with the caller's buffer: %q", first)
	}
}
