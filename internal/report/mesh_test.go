package report

import (
	"bytes"
	"testing"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/testkit"
)

// meshDoc is a three-peer mesh with one slow peer (c), one pair cut
// short and one failed.
func meshDoc(kind spec.Kind) result.MeshDocument {
	t := spec.Default()
	t.Kind = kind
	t.Duration = 500 * time.Millisecond
	doc := result.MeshDocument{
		Schema: result.MeshSchema, Command: "mesh", Spec: t,
		Started: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Peers:   []result.MeshPeer{{Name: "a", Address: "10.77.1.1:7575", Local: true}, {Name: "b", Address: "10.77.1.2:7575"}, {Name: "c", Address: "10.77.1.3:7575"}},
	}
	figure := map[[2]string]float64{
		{"a", "b"}: 941.2e6, {"a", "c"}: 19.1e6, {"b", "a"}: 938.7e6,
		{"b", "c"}: 19.05e6, {"c", "a"}: 19.3e6,
	}
	for _, src := range []string{"a", "b", "c"} {
		for _, dst := range []string{"a", "b", "c"} {
			if src == dst {
				continue
			}
			p := result.MeshPair{Source: src, Destination: dst, Via: result.ViaRelay}
			if src == "a" {
				p.Via = result.ViaDirect
			}
			v, ok := figure[[2]string{src, dst}]
			if !ok {
				p.Error = "server 10.77.1.3:7575: relay to 10.77.1.2:7575: server busy"
				doc.Pairs = append(doc.Pairs, p)
				continue
			}
			r := result.Result{Spec: t, Directions: []result.DirectionResult{{}}}
			r.Summary.BitsPerSecond = v
			r.Summary.RRSummary = &result.RRSummary{Transactions: 100, Latency: stats.Latency{Count: 100, P50: v / 1e7, P99: v / 5e6}}
			if src == "b" && dst == "c" {
				r.Interrupted = true
			}
			p.Result = &r
			doc.Pairs = append(doc.Pairs, p)
		}
	}
	doc.BuildMatrix()
	return doc
}

func TestMeshText(t *testing.T) {
	for _, kind := range []spec.Kind{spec.TCPStream, spec.TCPMaerts, spec.TCPRR} {
		t.Run(string(kind), func(t *testing.T) {
			var b bytes.Buffer
			MeshText(&b, meshDoc(kind))
			testkit.Golden(t, "mesh-"+string(kind)+".golden", b.String())
		})
	}
}

func TestMeshCSV(t *testing.T) {
	var b bytes.Buffer
	if err := MeshCSV(&b, meshDoc(spec.TCPRR)); err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "mesh.csv.golden", b.String())
}
