package apicheck

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite api/admitd.txt with the current API")

// golden is the checked-in API of the library, relative to this package.
const (
	moduleRoot = "../.."
	golden     = "../../api/admitd.txt"
	module     = "github.com/admitd/admitd"
)

// libraryDirs are the directories whose API is kept compatible.
var libraryDirs = []string{"pkg", "testenv"}

func TestAPI(t *testing.T) {
	got, err := Surface(moduleRoot, module, libraryDirs...)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v; create it with: go test ./internal/apicheck -update", err)
	}
	removed, added := Diff(strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), got)
	if len(removed) > 0 {
		t.Errorf("the library API lost %d line(s); this breaks its users, so make sure it is intended:\n-%s",
			len(removed), strings.Join(removed, "\n-"))
	}
	if len(added) > 0 {
		t.Errorf("the library API gained %d line(s):\n+%s", len(added), strings.Join(added, "\n+"))
	}
	if len(removed)+len(added) > 0 {
		t.Log("if the change is intended, regenerate api/admitd.txt with: go test ./internal/apicheck -update")
	}
}

func TestSurface(t *testing.T) {
	got, err := Surface(filepath.Join("testdata", "mod"), "example.com/mod", "lib")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg example.com/mod/lib, const High Level",
		"pkg example.com/mod/lib, const Low Level",
		"pkg example.com/mod/lib, const Name",
		"pkg example.com/mod/lib, func Map[K comparable, V any](map[K]V) []K",
		"pkg example.com/mod/lib, func New(string, ...int) (*Plugin, error)",
		"pkg example.com/mod/lib, method (*Plugin) Run(io.Reader, int, int) error",
		"pkg example.com/mod/lib, type Alias = Plugin",
		"pkg example.com/mod/lib, type Handler interface",
		"pkg example.com/mod/lib, type Handler interface, Handles(string) bool",
		"pkg example.com/mod/lib, type Handler interface, embedded io.Closer",
		"pkg example.com/mod/lib, type Level int",
		"pkg example.com/mod/lib, type List[T any] []T",
		"pkg example.com/mod/lib, type Plugin struct",
		"pkg example.com/mod/lib, type Plugin struct, Done bool",
		"pkg example.com/mod/lib, type Plugin struct, Hook func(n int) error",
		"pkg example.com/mod/lib, type Plugin struct, Name string",
		"pkg example.com/mod/lib, type Plugin struct, Ready bool",
		"pkg example.com/mod/lib, type Plugin struct, embedded io.Reader",
		"pkg example.com/mod/lib, var Count int",
		"pkg example.com/mod/lib, var ErrX",
		"pkg example.com/mod/lib/sub, func Sub()",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Surface =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDiff(t *testing.T) {
	cases := []struct {
		name                  string
		want, got             []string
		wantRemoved, wantAdds []string
	}{
		{"same", []string{"a", "b"}, []string{"a", "b"}, nil, nil},
		{"added", []string{"a"}, []string{"a", "b"}, nil, []string{"b"}},
		{"removed", []string{"a", "b"}, []string{"b"}, []string{"a"}, nil},
		{"changed", []string{"a", "f(int)"}, []string{"a", "f(string)"}, []string{"f(int)"}, []string{"f(string)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			removed, added := Diff(tc.want, tc.got)
			if !reflect.DeepEqual(removed, tc.wantRemoved) || !reflect.DeepEqual(added, tc.wantAdds) {
				t.Errorf("Diff(%v, %v) = %v, %v, want %v, %v", tc.want, tc.got, removed, added, tc.wantRemoved, tc.wantAdds)
			}
		})
	}
}
