package lab

import (
	"os/user"
	"testing"
)

func TestCurrentOwner(t *testing.T) {
	if o := currentOwner(0, "1000"); o.UID != 1000 {
		t.Errorf("root through sudo for uid 1000: owner uid %d", o.UID)
	}
	if o := currentOwner(1000, "0"); o.UID != 1000 {
		t.Errorf("uid 1000 with a stray SUDO_UID=0: owner uid %d", o.UID)
	}
	if o := currentOwner(0, "x"); o.UID != 0 {
		t.Errorf("a malformed SUDO_UID: owner uid %d", o.UID)
	}
	if o := currentOwner(0, ""); o.User != "root" {
		if u, err := user.LookupId("0"); err == nil {
			t.Errorf("uid 0 is %q, owner names %q", u.Username, o.User)
		}
	}
	if got := (Owner{UID: 4242}).String(); got != "uid 4242" {
		t.Errorf("nameless owner: %q", got)
	}
}
