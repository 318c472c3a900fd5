package repos

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentkit/agentkit/internal/state"
)

func TestRegister(t *testing.T) {
	ctx := context.Background()
	db, err := state.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	r, created, err := Register(ctx, db, "shop", "/src/shop", now)
	if err != nil || !created || r.Name != "shop" {
		t.Fatalf("%+v %v %v", r, created, err)
	}
	if _, created, err := Register(ctx, db, "shop", "/src/shop", now); err != nil || created {
		t.Fatalf("second register: %v %v", created, err)
	}
	if _, _, err := Register(ctx, db, "other", "/src/shop", now); err == nil || !strings.Contains(err.Error(), `already registered as "shop"`) {
		t.Fatalf("%v", err)
	}
	if _, _, err := Register(ctx, db, "shop", "/src/shop2", now); err == nil || !strings.Contains(err.Error(), "taken by /src/shop") {
		t.Fatalf("%v", err)
	}
	if _, _, err := Register(ctx, db, "Bad Name", "/x", now); err == nil {
		t.Fatal("bad name accepted")
	}
	if _, err := ByName(ctx, db, "nope"); err == nil || !strings.Contains(err.Error(), "registered: shop") {
		t.Fatalf("%v", err)
	}
	all, _ := List(ctx, db)
	if len(all) != 1 || all[0].Path != "/src/shop" {
		t.Fatalf("%+v", all)
	}
}

func TestDefaultName(t *testing.T) {
	for in, want := range map[string]string{"/a/My Project": "my-project", "/a/shop": "shop", "/a/.hidden": "hidden", "/a/ü": "-"} {
		got := DefaultName(in)
		if want == "-" {
			if ValidateName(got) != nil {
				t.Errorf("DefaultName(%q) = %q is not valid", in, got)
			}
			continue
		}
		if got != want {
			t.Errorf("DefaultName(%q) = %q; want %q", in, got, want)
		}
	}
}
