package report

import (
	"encoding/json"
	"fmt"
	"io"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// The JSON stream (run --json-stream, iperf3's --json-stream): one JSON
// object a line, {"event": ..., "data": ...}, written as things happen,
// for dashboards and long runs that cannot wait for the document:
//
//	{"event":"start","data":{"server":"host:7575","spec":{...}}}
//	{"event":"interval","data":{"direction":"client->server","index":0,"interval":{...},"streams":[...]}}
//	{"event":"end","data":{the results document}}
//
// Numbers are those of the results document (bits/s, bytes, seconds);
// a run that fails ends with {"event":"error","data":{"error":"..."}}.

// StreamEvent is one line of the JSON stream.
type StreamEvent struct {
	Event string `json:"event"` // start, interval, end or error
	Data  any    `json:"data"`
}

// StreamStart is the data of a stream's start event.
type StreamStart struct {
	Server string    `json:"server"`
	Spec   spec.Test `json:"spec"`
}

// StreamError is the data of a stream's error event.
type StreamError struct {
	Error string `json:"error"`
}

// Stream writes one event of the JSON stream as one line.
func Stream(w io.Writer, event string, data any) error {
	b, err := json.Marshal(StreamEvent{Event: event, Data: data})
	if err != nil {
		return fmt.Errorf("json stream %s: %w", event, err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// StreamEnd writes the stream's last event: the results document.
func StreamEnd(w io.Writer, doc result.Document) error { return Stream(w, "end", doc) }
