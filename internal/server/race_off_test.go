//go:build !race

package server_test

// raceEnabled is set when the tests run under the race detector, whose
// shadow memory is several times what a session itself holds.
const raceEnabled = false
