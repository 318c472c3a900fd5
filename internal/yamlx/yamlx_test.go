package yamlx

import (
	"strings"
	"testing"
)

type doc struct {
	Name  string   `yaml:"name"`
	Items []string `yaml:"items"`
}

func TestDecode(t *testing.T) {
	var d doc
	if err := Decode([]byte("name: a\nitems: [x, y]\n"), &d); err != nil || d.Name != "a" || len(d.Items) != 2 {
		t.Fatalf("%+v %v", d, err)
	}
	d = doc{Name: "kept"}
	if err := Decode(nil, &d); err != nil || d.Name != "kept" {
		t.Fatalf("empty: %+v %v", d, err)
	}
	err := Decode([]byte("name: a\nbogus: 1\n"), &d)
	if err == nil || !strings.Contains(Format(err), "bogus") || !strings.Contains(Format(err), "[2:") {
		t.Fatalf("unknown field: %v", err)
	}
}

// A stray tag made the decoder panic (found by the supervisor's fuzzing).
func TestDecodePanicIsAnError(t *testing.T) {
	var d doc
	err := Decode([]byte("name: a\nitems: !x]\n"), &d)
	if err == nil {
		t.Fatal("malformed YAML accepted")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("name: a\nitems: [x]\n"))
	f.Add([]byte("items: !calendar-contract]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		_ = Decode(data, &d) // must not panic
	})
}
