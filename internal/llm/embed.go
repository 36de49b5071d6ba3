package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Model string `json:"model"`
	Data  []struct {
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage Usage `json:"usage"`
}

// Embed asks the /embeddings endpoint for one vector per input and returns
// them in input order, whatever order the server listed them in. All vectors
// have the same length. Batching to the server's limit (2,048 inputs for
// OpenAI) is the caller's job. No inputs means no request.
func (c *Client) Embed(ctx context.Context, inputs []string) (vecs [][]float32, u Usage, err error) {
	if len(inputs) == 0 {
		return nil, Usage{}, nil
	}
	if c.cfg.Observe != nil {
		defer func(start time.Time) {
			c.cfg.Observe(Call{Op: "embed", Duration: time.Since(start), Usage: u, ErrKind: errKind(err)})
		}(time.Now())
	}
	limit := int64(MaxResponseBytes + embedBytesPerInput*len(inputs))
	data, err := c.post(ctx, "embed", c.embedURL, embedRequest{Model: c.cfg.Model, Input: inputs}, inputs, limit)
	if err != nil {
		return nil, Usage{}, err
	}
	var body embedResponse
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&body); err != nil {
		return nil, Usage{}, c.badBody("embed", data, err, inputs)
	}
	if len(body.Data) != len(inputs) {
		return nil, Usage{}, c.badBody("embed", data,
			fmt.Errorf("%d embeddings for %d inputs", len(body.Data), len(inputs)), inputs)
	}
	vecs = make([][]float32, len(inputs))
	for _, d := range body.Data {
		if d.Index < 0 || d.Index >= len(inputs) || vecs[d.Index] != nil {
			return nil, Usage{}, &Error{Op: "embed", Kind: BadResponse,
				Message: fmt.Sprintf("embedding index %d is out of range or repeated", d.Index)}
		}
		v, err := decodeVector(d.Embedding)
		if err != nil {
			return nil, Usage{}, &Error{Op: "embed", Kind: BadResponse,
				Message: fmt.Sprintf("embedding %d: %v", d.Index, err)}
		}
		vecs[d.Index] = v
	}
	for i, v := range vecs {
		if len(v) != len(vecs[0]) {
			return nil, Usage{}, &Error{Op: "embed", Kind: BadResponse,
				Message: fmt.Sprintf("embedding %d has %d dimensions, embedding 0 has %d", i, len(v), len(vecs[0]))}
		}
	}
	u = body.Usage
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return vecs, u, nil
}

// decodeVector reads an embedding sent as an array of numbers or, as servers
// do when asked for encoding_format base64, as little-endian float32s in
// base64.
func decodeVector(raw json.RawMessage) ([]float32, error) {
	var v []float32
	if err := json.Unmarshal(raw, &v); err == nil {
		if len(v) == 0 {
			return nil, errors.New("empty vector")
		}
		return v, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errors.New("neither an array of numbers nor base64")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || len(b)%4 != 0 {
		return nil, errors.New("invalid base64 vector")
	}
	v = make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
