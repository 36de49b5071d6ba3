package llmtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"unicode"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/llm"
)

// EmbedRequest is a decoded POST /v1/embeddings body.
type EmbedRequest struct {
	Model string
	// Input holds the texts; a single string on the wire becomes one element.
	Input          []string
	EncodingFormat string
	Dimensions     int // 0 when the request did not say
	Header         http.Header
}

func decodeEmbed(r *http.Request) (EmbedRequest, error) {
	var wire struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int            `json:"dimensions"`
		User           string          `json:"user"`
	}
	if err := decodeStrict(r, &wire); err != nil {
		return EmbedRequest{}, err
	}
	req := EmbedRequest{Model: wire.Model, EncodingFormat: wire.EncodingFormat, Header: r.Header.Clone()}
	if wire.Dimensions != nil {
		req.Dimensions = *wire.Dimensions
	}
	var one string
	if json.Unmarshal(wire.Input, &one) == nil {
		req.Input = []string{one}
	} else if json.Unmarshal(wire.Input, &req.Input) != nil {
		return req, &invalidError{"input", "llmtest: input must be a string or an array of strings"}
	}
	switch {
	case req.Model == "":
		return req, &invalidError{"model", "you must provide a model parameter"}
	case len(req.Input) == 0:
		return req, &invalidError{"input", "'$.input' is invalid. Please check the API reference."}
	case slices.Contains(req.Input, ""):
		return req, &invalidError{"input", "'$.input' is invalid. Please check the API reference."}
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		return req, &invalidError{"encoding_format", "encoding_format must be 'float' or 'base64'"}
	case wire.Dimensions != nil && *wire.Dimensions < 1:
		return req, &invalidError{"dimensions", "dimensions must be at least 1"}
	}
	return req, nil
}

// embeddings builds the normal answer to req, listing the vectors in reverse
// order when reversed (the index field, not the order, is what counts).
func (s *Server) embeddings(req *EmbedRequest, reversed bool) ([]byte, llm.Usage) {
	s.mu.Lock()
	dims := s.dims
	s.mu.Unlock()
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	data := make([]map[string]any, len(req.Input))
	var u llm.Usage
	for i, text := range req.Input {
		v := Embedding(text, dims)
		var vec any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, f := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(f))
			}
			vec = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": vec}
		u.PromptTokens += Tokens(text)
	}
	u.TotalTokens = u.PromptTokens
	if reversed {
		slices.Reverse(data)
	}
	body, err := json.Marshal(map[string]any{"object": "list", "data": data, "model": req.Model, "usage": map[string]int{
		"prompt_tokens": u.PromptTokens, "total_tokens": u.TotalTokens,
	}})
	if err != nil {
		panic(err) // finite floats and strings only: cannot fail
	}
	return body, u
}

// Embedding is the vector the server returns for text: a hashed bag of
// words, L2-normalised, so texts that share words have a high cosine
// similarity and texts that share none are near 0. Words are runs of letters
// and digits, lower-cased; Chinese, Japanese and Korean characters count one
// by one and in adjacent pairs, so Chinese text is comparable too. A text with
// no words still gets a fixed unit vector.
func Embedding(text string, dims int) []float32 {
	v := make([]float64, dims)
	add := func(token string) {
		h := fnv.New64a()
		h.Write([]byte(token))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(dims)] += sign
	}
	var word []rune
	var prevCJK rune
	flush := func() {
		if len(word) > 0 {
			add(string(word))
			word = word[:0]
		}
	}
	for _, r := range text {
		switch {
		case chars.IsCJK(r):
			flush()
			add(string(r))
			if prevCJK != 0 {
				add(string([]rune{prevCJK, r}))
			}
			prevCJK = r
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, unicode.ToLower(r))
		default:
			flush()
		}
		prevCJK = 0
	}
	flush()
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dims)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
