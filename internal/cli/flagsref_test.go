package cli

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite "+flagsReference+" from the commands' flags")

const (
	flagsReference   = "../../docs/flags.md"
	regenerateFlags  = "go test ./internal/cli -run TestFlagsReference -update"
	apiServerFlags   = "testdata/kube-apiserver-flags.txt"
	controllerMFlags = "testdata/kube-controller-manager-flags.txt"
)

// TestFlagsReference: docs/flags.md is what the commands declare, so the
// reference cannot fall behind a new or changed flag.
func TestFlagsReference(t *testing.T) {
	got := renderFlagsReference(NewRootCommand(), upstreamFlags{
		apiServer:         readFlagList(t, apiServerFlags),
		controllerManager: readFlagList(t, controllerMFlags),
	})
	if *update {
		if err := os.WriteFile(flagsReference, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(flagsReference)
	if err != nil {
		t.Fatalf("%v; create it with: %s", err, regenerateFlags)
	}
	if !bytes.Equal(old, got) {
		t.Errorf("%s differs from the commands' flags (%s); regenerate it with: %s", flagsReference, firstDifference(old, got), regenerateFlags)
	}
}

// TestFlagsReferenceOrigins checks the origin column on flags whose owner is
// known, so that a list read wrongly cannot mark everything admitd's own.
func TestFlagsReferenceOrigins(t *testing.T) {
	up := upstreamFlags{
		apiServer:         readFlagList(t, apiServerFlags),
		controllerManager: readFlagList(t, controllerMFlags),
	}
	serve := newServeCommand()
	for name, want := range map[string]string{
		"secure-port":               "kube-apiserver",
		"etcd-servers":              "kube-apiserver",
		"feature-gates":             "kube-apiserver",
		"authorization-mode":        "kube-apiserver (its default: none)",
		"controllers":               "kube-controller-manager",
		"cluster-signing-cert-file": "kube-controller-manager",
		"data-dir":                  "admitd",
		"simulated-nodes":           "admitd",
	} {
		f := serve.Flags().Lookup(name)
		if f == nil {
			t.Errorf("admitd serve has no --%s", name)
			continue
		}
		if got := up.origin(f); got != want {
			t.Errorf("origin(--%s) = %q, want %q", name, got, want)
		}
	}
}

// upstreamFlags are the defaults of kube-apiserver's and
// kube-controller-manager's flags by name, as test/upstream lists them.
type upstreamFlags struct {
	apiServer, controllerManager map[string]string
}

// origin says whose flag f of `admitd serve` is, with the upstream default
// when it differs from admitd's.
func (u upstreamFlags) origin(f *pflag.Flag) string {
	for _, c := range []struct {
		name     string
		defaults map[string]string
	}{{"kube-apiserver", u.apiServer}, {"kube-controller-manager", u.controllerManager}} {
		def, ok := c.defaults[f.Name]
		if !ok {
			continue
		}
		if emptyDefault(def) == emptyDefault(f.DefValue) {
			return c.name
		}
		if emptyDefault(def) == "" {
			return c.name + " (its default: none)"
		}
		return c.name + " (its default: " + codeSpan(def) + ")"
	}
	return "admitd"
}

// readFlagList reads a list test/upstream wrote: name, type and default per
// line, tab-separated, after comment lines.
func readFlagList(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defaults := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "#") {
			continue
		}
		fields := strings.SplitN(s.Text(), "\t", 3)
		if len(fields) != 3 {
			t.Fatalf("%s: line %q is not name, type and default", file, s.Text())
		}
		defaults[fields[0]] = fields[2]
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(defaults) == 0 {
		t.Fatalf("%s lists no flags", file)
	}
	return defaults
}

func renderFlagsReference(root *cobra.Command, up upstreamFlags) []byte {
	var b bytes.Buffer
	b.WriteString(flagsPreamble)
	commands := root.Commands()
	for _, c := range commands {
		fmt.Fprintf(&b, "- [%s](#%s): %s\n", c.CommandPath(), strings.ReplaceAll(c.CommandPath(), " ", "-"), c.Short)
	}
	for _, c := range commands {
		writeCommandFlags(&b, c, up)
	}
	return b.Bytes()
}

const flagsPreamble = `# Flags reference

<!-- Generated from the commands by ` + "`" + regenerateFlags + "`" + `. DO NOT EDIT. -->

Every flag of every ` + "`admitd`" + ` command, as the command itself declares it (` + "`admitd <command> --help`" + `
shows the same): its type, its default (blank when it has none) and what it does. This page is
generated from the commands, and ` + "`go test ./internal/cli`" + ` fails when it is stale; regenerate it with
` + "`" + regenerateFlags + "`" + `.

In ` + "`admitd serve`" + `'s table, *origin* says whose flag it is: ` + "`kube-apiserver`" + ` when kube-apiserver 1.37.2
has a flag of that name, ` + "`kube-controller-manager`" + ` when only kube-controller-manager 1.37.2 has one
(admitd runs some of its controllers), ` + "`admitd`" + ` when it is admitd's own; upstream's default follows
when it differs from admitd's. The upstream flags are listed in
` + "`internal/cli/testdata/kube-apiserver-flags.txt`" + ` and ` + "`kube-controller-manager-flags.txt`" + `, which
` + "`test/upstream`" + ` generates from k8s.io/kubernetes v1.37.2 (` + "`cd test/upstream && go test ./apiserverflags ./controllermanagerflags -update`" + `).

`

func writeCommandFlags(b *bytes.Buffer, c *cobra.Command, up upstreamFlags) {
	serve := c.Name() == "serve"
	fmt.Fprintf(b, "\n## %s\n\n%s.\n\n`%s`\n\n", c.CommandPath(), c.Short, c.UseLine())
	var flags []*pflag.Flag
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			flags = append(flags, f)
		}
	})
	if len(flags) == 0 {
		b.WriteString("No flags.\n")
		return
	}
	if serve {
		b.WriteString("| flag | type | default | origin | description |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("| flag | type | default | description |\n|---|---|---|---|\n")
	}
	for _, f := range flags {
		name, usage := pflag.UnquoteUsage(f)
		if name == "" {
			name = f.Value.Type()
		}
		fmt.Fprintf(b, "| %s | %s | %s |", flagNames(f), name, defaultCell(f.DefValue))
		if serve {
			fmt.Fprintf(b, " %s |", up.origin(f))
		}
		fmt.Fprintf(b, " %s%s |\n", flagStatus(f), tableText(usage))
	}
	if serve {
		writeMissing(b, "kube-apiserver 1.37.2", up.apiServer, c.Flags())
	}
}

// writeMissing lists the upstream flags the command does not have.
func writeMissing(b *bytes.Buffer, source string, upstream map[string]string, fs *pflag.FlagSet) {
	var missing []string
	for name := range upstream {
		if fs.Lookup(name) == nil {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	fmt.Fprintf(b, "\nFlags of %s that `admitd serve` does not have (%d): `--%s`.\n", source, len(missing), strings.Join(missing, "`, `--"))
}

func flagNames(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "`-" + f.Shorthand + "`, `--" + f.Name + "`"
	}
	return "`--" + f.Name + "`"
}

func flagStatus(f *pflag.Flag) string {
	switch {
	case f.Deprecated != "":
		return "(deprecated: " + tableText(f.Deprecated) + ") "
	case f.Hidden:
		return "(hidden from --help) "
	}
	return ""
}

func emptyDefault(def string) string {
	if def == "[]" {
		return ""
	}
	return def
}

func defaultCell(def string) string {
	if emptyDefault(def) == "" {
		return ""
	}
	return codeSpan(def)
}

// codeSpan puts s in a code span that a table cell can hold.
func codeSpan(s string) string {
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// tableText escapes what Markdown would read as a cell border, a tag or
// emphasis, and keeps the cell on one line.
func tableText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", `\<`, "*", `\*`, "\n", " ").Replace(s)
}

// firstDifference names the first line where two versions differ.
func firstDifference(old, got []byte) string {
	o, g := strings.Split(string(old), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(o) && i < len(g); i++ {
		if o[i] != g[i] {
			return fmt.Sprintf("line %d is %q, the commands give %q", i+1, o[i], g[i])
		}
	}
	return fmt.Sprintf("%d lines, the commands give %d", len(o), len(g))
}
