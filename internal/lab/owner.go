package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"
)

// Owner is who made a lab, recorded by Up so that on a shared host
// `lab down --all` removes only the labs of the user who asks, and `lab
// status` says whose the others are. Labs need root, so a user usually
// makes one through sudo: the owner is then the user sudo ran for
// (SUDO_UID), not root.
type Owner struct {
	UID     int       `json:"uid"`
	User    string    `json:"user,omitempty"`
	Created time.Time `json:"created"`
}

// String names the owner: "alice (uid 1000)", or "uid 1000" when the
// user has no name.
func (o Owner) String() string {
	if o.User == "" {
		return "uid " + strconv.Itoa(o.UID)
	}
	return fmt.Sprintf("%s (uid %d)", o.User, o.UID)
}

// CurrentOwner is the user this process acts for: SUDO_UID when root runs
// it through sudo, else the real uid.
func CurrentOwner() Owner {
	return currentOwner(os.Getuid(), os.Getenv("SUDO_UID"))
}

func currentOwner(uid int, sudoUID string) Owner {
	if uid == 0 && sudoUID != "" {
		if n, err := strconv.Atoi(sudoUID); err == nil && n >= 0 {
			uid = n
		}
	}
	o := Owner{UID: uid}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		o.User = u.Username
	}
	return o
}

// ownerPath is the owner record of the lab called name.
func ownerPath(name string) string { return filepath.Join(StateDir, name+".owner.json") }

// LoadOwner returns who made the lab called name, or nil when no record
// says (a lab made by an older wirespeed, or one whose record is gone).
func LoadOwner(name string) (*Owner, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(ownerPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lab %s: owner: %w", name, err)
	}
	var o Owner
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("lab %s: owner record %s: %w", name, ownerPath(name), err)
	}
	return &o, nil
}

// saveOwner records o as the owner of the lab called name, readable by
// every user (status shows it to them).
func saveOwner(name string, o Owner) error {
	if err := saveState(ownerPath(name), o); err != nil {
		return fmt.Errorf("lab %s: owner: %w", name, err)
	}
	return nil
}
