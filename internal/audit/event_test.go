package audit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/events")

// eventCase is testdata/events/<case>/case.json: a request, the rule it
// matches, and the admission annotations it collected. The expected log
// lines are in events.jsonl next to it.
type eventCase struct {
	Rule      PolicyRule `json:"rule"`
	Admission []struct {
		Key, Value string
		Level      Level
	} `json:"admission"`
	Request Request `json:"request"`
}

func TestEventGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/events/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "case.json"))
			if err != nil {
				t.Fatal(err)
			}
			var c eventCase
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("case.json: %v", err)
			}
			r := &c.Request
			r.Admission = admission.NewRecord()
			for _, a := range c.Admission {
				if err := r.Admission.AddAnnotationWithLevel(a.Key, a.Value, admissionLevel(a.Level)); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			a := New(Options{Policy: &Policy{Rules: []PolicyRule{c.Rule}}, Sink: NewStreamWriter(&out),
				Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }})
			if err := a.LogRequest(r); err != nil {
				t.Fatalf("LogRequest() error = %v", err)
			}
			golden := filepath.Join(dir, "events.jsonl")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("LogRequest() wrote\n%s\nwant\n%s", got, want)
			}
			checkEventInvariants(t, out.Bytes())
		})
	}
}

// checkEventInvariants checks what must hold for any log: every line is
// one Event of the same request, RequestReceived comes first and is stamped
// with the receive time, and bodies never appear below their level.
func checkEventInvariants(t *testing.T, log []byte) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not an Event: %v", i, err)
		}
		if ev.Kind != KindEvent || ev.APIVersion != APIVersion {
			t.Errorf("line %d: type %s %s", i, ev.APIVersion, ev.Kind)
		}
		if ev.Stage == StageRequestReceived {
			if i != 0 || ev.StageTimestamp != ev.RequestReceivedTimestamp || ev.ResponseStatus != nil || ev.Annotations != nil {
				t.Errorf("line %d: RequestReceived event has response data or is not first: %s", i, line)
			}
		}
		if ev.Level.Less(LevelRequest) && ev.RequestObject != nil {
			t.Errorf("line %d: requestObject at level %s", i, ev.Level)
		}
		if ev.Level.Less(LevelRequestResponse) && ev.ResponseObject != nil {
			t.Errorf("line %d: responseObject at level %s", i, ev.Level)
		}
	}
}

func TestNewEventLevelNone(t *testing.T) {
	r := &Request{AuditID: "x", Verb: "get"}
	if ev := NewEvent(r, RequestConfig{Level: LevelNone}, StageResponseComplete); ev != nil {
		t.Errorf("NewEvent(None) = %+v, want nil", ev)
	}
	var out bytes.Buffer
	a := New(Options{Policy: &Policy{Rules: []PolicyRule{{Level: LevelNone}}}, Sink: NewStreamWriter(&out)})
	if err := a.LogRequest(r); err != nil || out.Len() != 0 {
		t.Errorf("LogRequest() at None wrote %q, %v; want nothing", out.String(), err)
	}
	a = New(Options{Policy: nil, Sink: NewStreamWriter(&out)})
	if err := a.LogRequest(r); err != nil || out.Len() != 0 {
		t.Errorf("LogRequest() without policy wrote %q, %v; want nothing", out.String(), err)
	}
}

func TestLogStageTimestamps(t *testing.T) {
	received := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("CEST", 7200))
	now := received.Add(1500 * time.Millisecond)
	var out bytes.Buffer
	a := New(Options{Policy: &Policy{Rules: []PolicyRule{{Level: LevelMetadata}}}, Sink: NewStreamWriter(&out),
		Now: func() time.Time { return now }})
	r := &Request{AuditID: "x", Verb: "get", ReceivedAt: received, ResponseStatus: &ResponseStatus{Code: 200}}
	if err := a.LogStage(r, StageResponseStarted); err != nil {
		t.Fatal(err)
	}
	want := `"requestReceivedTimestamp":"2026-05-06T05:08:09.123456Z","stageTimestamp":"2026-05-06T05:08:10.623456Z"`
	if !strings.Contains(out.String(), want) {
		t.Errorf("LogStage() wrote %s, want it to contain %s", out.String(), want)
	}
}

func TestMicroTimeRoundTrip(t *testing.T) {
	in := MicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	b, err := json.Marshal(in)
	if err != nil || string(b) != `"2026-01-02T03:04:05.000006Z"` {
		t.Fatalf("Marshal() = %s, %v", b, err)
	}
	var out MicroTime
	if err := json.Unmarshal(b, &out); err != nil || !time.Time(out).Equal(time.Time(in)) {
		t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, time.Time(out), err, time.Time(in))
	}
	if b, _ := json.Marshal(MicroTime{}); string(b) != "null" {
		t.Errorf("Marshal(zero) = %s, want null", b)
	}
}

func TestWithoutManagedFields(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"object", `{"kind":"ConfigMap","metadata":{"name":"a","managedFields":[{"manager":"m"}],"labels":{"z":"1","a":"2"}},"data":{"b":"1","a":"2"}}`,
			`{"kind":"ConfigMap","metadata":{"name":"a","labels":{"z":"1","a":"2"}},"data":{"b":"1","a":"2"}}`},
		{"list", `{"kind":"ConfigMapList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","managedFields":[]}},{"metadata":{"name":"b"}}]}`,
			`{"kind":"ConfigMapList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`},
		{"table", `{"kind":"Table","rows":[{"cells":[1],"object":{"kind":"PartialObjectMetadata","metadata":{"name":"a","managedFields":[{}]}}}]}`,
			`{"kind":"Table","rows":[{"cells":[1],"object":{"kind":"PartialObjectMetadata","metadata":{"name":"a"}}}]}`},
		{"rows of a non-table stay", `{"kind":"X","rows":[{"object":{"metadata":{"managedFields":[]}}}]}`,
			`{"kind":"X","rows":[{"object":{"metadata":{"managedFields":[]}}}]}`},
		{"status", `{"kind":"Status","metadata":{},"code":404}`, `{"kind":"Status","metadata":{},"code":404}`},
		{"not an object", `[1,2]`, `[1,2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(bodyForLog(json.RawMessage(tt.in), true)); got != tt.want {
				t.Errorf("bodyForLog(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
	if got := bodyForLog(json.RawMessage(`{"a":`), false); got != nil {
		t.Errorf("bodyForLog(invalid) = %s, want nil", got)
	}
}
