package cel

import "testing"

func TestEstimateCost(t *testing.T) {
	c := NewCompiler(Options{})
	tests := []struct {
		name     string
		expr     string
		vars     []Variable
		min, max uint64 // bounds on the estimated maximum
		wantErr  bool
		loops    bool
	}{
		{"comparison", "object.metadata.name == 'x'", nil, 1, 100, false, false},
		{"one loop over a request list", "object.spec.containers.all(c, c.name != '')", nil, PerCallLimit / 2, 1 << 62, false, true},
		{"nested loops", "object.spec.containers.all(c, object.spec.containers.exists(d, d.name == c.name))", nil, PerCallLimit * PerCallLimit, ^uint64(0), false, true},
		{"bounded by a literal", "[1, 2, 3].all(x, x > 0)", nil, 1, 100, false, true},
		{"variable", "variables.names.size() > 0", []Variable{{Name: "names", Expression: "['a', 'b']"}}, 1, 100, false, false},
		{"membership in an untyped value", "'k' in object.data", nil, 1, ^uint64(0), false, false},
		{"syntax error", "object.metadata.name ==", nil, 0, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			est, err := c.Compose(tt.vars, CompileOptions{}).EstimateCost(tt.expr, CompileOptions{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("EstimateCost(%q) error = %v, want error %v", tt.expr, err, tt.wantErr)
			}
			if !tt.wantErr && (est.Max < tt.min || est.Max > tt.max) {
				t.Errorf("EstimateCost(%q).Max = %d, want in [%d, %d]", tt.expr, est.Max, tt.min, tt.max)
			}
			if est.Loops != tt.loops {
				t.Errorf("EstimateCost(%q).Loops = %v, want %v", tt.expr, est.Loops, tt.loops)
			}
		})
	}
	if _, err := c.EstimateCost("object.metadata.name == 'x'", CompileOptions{}); err != nil {
		t.Errorf("Compiler.EstimateCost: %v", err)
	}
}
