package printers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// objectMetaDoc holds the descriptions upstream gives the Name and Age
// columns.
var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}

	containersColumn = wide(str("Containers", "Names of each container in the template."))
	imagesColumn     = wide(str("Images", "Images referenced by each container in the template."))
)

// str, integer and boolean are column definitions of those types.
func str(name, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Description: desc}
}

func integer(name, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "integer", Description: desc}
}

func boolean(name, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "boolean", Description: desc}
}

// wide marks a column as shown only by kubectl get -o wide.
func wide(c metav1.TableColumnDefinition) metav1.TableColumnDefinition {
	c.Priority = 1
	return c
}

// since is the human age of t at now, "<unknown>" when unset.
func since(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func sinceMicro(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// containerCells are the comma-separated names and images of containers.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// orNone is s, or "<none>" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// deref is *p, or zero when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// boolPtr prints a *bool as upstream's printers do: True, False or <unset>.
func boolPtr(b *bool) string {
	switch {
	case b == nil:
		return "<unset>"
	case *b:
		return "True"
	default:
		return "False"
	}
}

// firstWithMore joins the first max items of list and says how many more
// there are: "a,b,c + 2 more...". An empty list prints "<unset>".
func firstWithMore(list []string, max int) string {
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ","), len(list)-max)
	}
	if joined := strings.Join(list, ","); joined != "" {
		return joined
	}
	return "<unset>" // none, or only empty names
}

// loadBalancerAddresses joins the distinct IPs (or hostnames when an entry has
// no IP) of load-balancer ingress points, sorted. The server renders wide
// output, so the value is never clipped.
func loadBalancerAddresses(ips, hostnames []string) string {
	set := map[string]bool{}
	for i := range ips {
		switch {
		case ips[i] != "":
			set[ips[i]] = true
		case hostnames[i] != "":
			set[hostnames[i]] = true
		}
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
