//go:build !unix

package archive

import "io/fs"

// owner is unknown where files have no user id.
func owner(fs.FileInfo) (int, bool) { return 0, false }
