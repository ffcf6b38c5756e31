package apiserver

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestListNeedingConversionAnswersConvertedObjects(t *testing.T) {
	ts := newConvertingServer(t, 3)
	w := ts.do("GET", backendsPath("v2"), "", "")
	if w.Code != 200 {
		t.Fatalf("list = %d %s", w.Code, w.Body)
	}
	var list struct {
		APIVersion string `json:"apiVersion"`
		Items      []struct {
			APIVersion string `json:"apiVersion"`
			Metadata   struct {
				ResourceVersion string            `json:"resourceVersion"`
				Labels          map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec map[string]any `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 || list.APIVersion != "net.example.com/v2" {
		t.Fatalf("list %s", w.Body)
	}
	for _, it := range list.Items {
		addr, _ := it.Spec["address"].(string)
		if it.APIVersion != "net.example.com/v2" || !strings.HasSuffix(addr, ".example.com:100"+addr[len(addr)-1:]) ||
			it.Metadata.ResourceVersion == "" || it.Metadata.Labels["app"] != "web" {
			t.Errorf("item %+v", it)
		}
	}
}
