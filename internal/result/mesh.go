package result

import (
	"time"

	"wirespeed/internal/spec"
)

// MeshSchema names the mesh document format and its version.
const MeshSchema = "wirespeed/mesh/v1"

// MeshDocument is what `wirespeed mesh` writes for one round: every
// ordered pair of peers it measured, each with its full result, and the
// matrix of their headline figures.
type MeshDocument struct {
	Schema  string `json:"schema"`
	Tool    Tool   `json:"tool"`
	Command string `json:"command"`
	// Spec is the test every pair ran; Repeat the iterations asked, when
	// the pairs iterated.
	Spec   spec.Test    `json:"spec"`
	Repeat *spec.Repeat `json:"repeat,omitempty"`
	// Round counts rounds from 1 with --every; 0 for a single round.
	Round       int        `json:"round,omitempty"`
	Started     time.Time  `json:"started"`
	Interrupted bool       `json:"interrupted"`
	Peers       []MeshPeer `json:"peers"`
	Pairs       []MeshPair `json:"pairs"`
	Matrix      MeshMatrix `json:"matrix"`
	Warnings    []string   `json:"warnings,omitempty"`
}

// MeshPeer is one server of the mesh.
type MeshPeer struct {
	// Name is the peer as given (--peers) or found (--peers-dns); pairs
	// and the matrix refer to peers by it.
	Name string `json:"name"`
	// Address is the HOST:PORT measured against.
	Address string `json:"address"`
	// Local is set for the peer that is the host `wirespeed mesh` ran on:
	// its pairs were measured from the mesh process itself.
	Local bool `json:"local,omitempty"`
}

// How a pair was measured.
const (
	ViaDirect = "direct" // the mesh process was the client
	ViaRelay  = "relay"  // the source's server was the client, on the mesh's behalf
)

// MeshPair is one ordered pair: the source server is the test's client,
// the destination its server (for TCP_STREAM the source sends).
type MeshPair struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Via         string `json:"via"`
	// Result is the pair's full result (Local is the source, Remote the
	// destination), absent when the pair failed before measuring.
	Result *Result `json:"result,omitempty"`
	// Error says why the pair has no result, or why it is partial.
	Error string `json:"error,omitempty"`
}

// MeshNotMeasured is the error of a pair an interrupt kept from starting.
const MeshNotMeasured = "not measured: the mesh was interrupted"

// Figures a mesh matrix shows.
const (
	MeshThroughput = "throughput_bps"
	MeshLatencyP50 = "latency_p50_us"
)

// What the matrix's rows are.
const (
	RowsSenders = "senders" // a stream test's data flows from row to column
	RowsClients = "clients" // TCP_BIDIR and request/response: the pair's source
)

// MeshMatrix holds one figure per ordered pair: Values[i][j] is for the
// pair from Rows[i] to Columns[j] (in the sense Orientation says), null
// where nothing was measured (the diagonal, pairs not asked for, failed
// pairs).
type MeshMatrix struct {
	Figure      string       `json:"figure"`
	Orientation string       `json:"rows_are"`
	Rows        []string     `json:"rows"`
	Columns     []string     `json:"columns"`
	Values      [][]*float64 `json:"values"`
}

// MeshFigure returns the figure a mesh of test kind k shows: p50 latency
// for request/response tests, throughput otherwise.
func MeshFigure(k spec.Kind) string {
	if k.RR() {
		return MeshLatencyP50
	}
	return MeshThroughput
}

// reversed reports whether t's data flows from server to client, so that
// the pair's destination is the sender.
func reversed(t spec.Test) bool {
	return t.Kind == spec.TCPMaerts || (t.Kind == spec.UDPStream && t.Reverse)
}

// Cell returns the row and the column of pair p in the matrix.
func (d *MeshDocument) Cell(p MeshPair) (row, column string) {
	if reversed(d.Spec) {
		return p.Destination, p.Source
	}
	return p.Source, p.Destination
}

// BuildMatrix fills in the document's matrix from its peers and pairs.
// A stream test's cell is the receiver's throughput, in the row of the
// sender: for TCP_MAERTS and UDP_STREAM -R the pair from A to B is the
// cell from B to A. TCP_BIDIR (the sum of both directions) and
// request/response tests (the p50 latency) are in the row of the source.
func (d *MeshDocument) BuildMatrix() {
	m := MeshMatrix{Figure: MeshFigure(d.Spec.Kind), Orientation: RowsSenders}
	if d.Spec.Kind == spec.TCPBidir || d.Spec.Kind.RR() {
		m.Orientation = RowsClients
	}
	idx := map[string]int{}
	for i, p := range d.Peers {
		idx[p.Name] = i
		m.Rows = append(m.Rows, p.Name)
		m.Columns = append(m.Columns, p.Name)
	}
	m.Values = make([][]*float64, len(d.Peers))
	for i := range m.Values {
		m.Values[i] = make([]*float64, len(d.Peers))
	}
	for _, p := range d.Pairs {
		row, col := d.Cell(p)
		i, ok1 := idx[row]
		j, ok2 := idx[col]
		if !ok1 || !ok2 || p.Result == nil || len(p.Result.Directions) == 0 {
			continue
		}
		v := p.Result.Summary.BitsPerSecond
		if m.Figure == MeshLatencyP50 {
			if p.Result.Summary.RRSummary == nil || p.Result.Summary.Latency.Count == 0 {
				continue
			}
			v = p.Result.Summary.Latency.P50
		}
		m.Values[i][j] = &v
	}
	d.Matrix = m
}
