package stream

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/engramhq/engram/events"
)

// encodeSamples are structured events whose data holds what json.Marshal
// changes: white space between tokens, <, >, &, U+2028 and U+2029, and
// escapes that must stay as they are.
var encodeSamples = []string{
	`{"specversion":"1.0","id":"e1","source":"/a","type":"turn.recorded","user":"u","data":{"session_id":"s","turn_index":0,"role":"user","content":"plain"}}`,
	`{"specversion":"1.0","id":"e2","source":"/a","type":"turn.recorded","user":"u","subject":"s","time":"2026-01-02T03:04:05.123+01:00",
	  "data" : { "session_id" : "s" ,
	    "turn_index":1, "role":"assistant", "content":"a <b> & c \u003c\u0026 \u2028 and \u2029 raw:` + "\u2028\u2029" + ` \" \\ \/ \n \t 中文 😀 \ud83d\ude00",
	    "tool_calls":[ {"name":"run", "input": { "cmd" : [ "ls", 1, 2.5e3, true, null, {} ] , "html":"<script>&amp;</script>" } } ] } }`,
	`{"specversion":"1.0","id":"<id>&","source":"urn:x:<y>","type":"memory.added","user":"u&v","namespace":"n<s>","agent":"a>b",
	  "data":{"kind":"rule","category":"decision","subject":"team","predicate":"rule","content":"likes <tags> & \"quotes\"","importance":0.9e0}}`,
	"{\"specversion\":\"1.0\",\"id\":\"e4\",\"source\":\"/a\",\"type\":\"session.ended\",\"user\":\"u\",\"data\":{\r\n\t\"session_id\":\"s\",\r\n\t\"message_count\":3, \"reason\":\"bye \\\\\\\" <x>\"}}",
}

// A validated event's body is byte for byte what json.Marshal makes.
func TestEncodeValidatedIsMarshal(t *testing.T) {
	t.Parallel()
	for i, s := range encodeSamples {
		agreeEncode(t, i, []byte(s), true)
	}
}

func FuzzEncodeValidated(f *testing.F) {
	for _, s := range encodeSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { agreeEncode(t, 0, b, false) })
}

func agreeEncode(t *testing.T, i int, b []byte, mustDecode bool) {
	t.Helper()
	e, _, err := events.DecodeStructured(b, 0)
	if err != nil {
		if mustDecode {
			t.Fatalf("sample %d: %v", i, err)
		}
		return
	}
	want, err := json.Marshal(e)
	if err != nil {
		t.Fatalf("sample %d: json.Marshal: %v", i, err)
	}
	m, err := encode(EventSubject(e), e, true)
	if err != nil {
		t.Fatalf("sample %d: encode: %v", i, err)
	}
	if !bytes.Equal(m.Data, want) {
		t.Fatalf("sample %d: the validated body is\n%s\njson.Marshal's is\n%s", i, m.Data, want)
	}
	slow, err := Encode(EventSubject(e), e)
	if err != nil || !bytes.Equal(slow.Data, want) || slow.Header.Get(jetstreamMsgID) != m.Header.Get(jetstreamMsgID) {
		t.Fatalf("sample %d: Encode gives %s (%v), headers %v and %v", i, slow.Data, err, slow.Header, m.Header)
	}
}
