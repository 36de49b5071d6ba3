package events_test

import (
	"fmt"
	"strings"

	"github.com/engramhq/engram/events"
)

const float32Rounding = "a schema does not round to float32, where 1e-50 is 0"

var (
	teaHash  = events.TextHash("prefers green tea, no sugar")
	nameHash = events.TextHash("名字是小明")
)

// embedded returns memory.embedded data of a model with the given dims
// (as JSON) and vectors.
func embedded(dims string, vectors ...string) string {
	return `{"model":"text-embedding-3-small","dims":` + dims + `,"vectors":[` + strings.Join(vectors, ",") + `]}`
}

// vec is one vector of memory.embedded data; components is the JSON
// between the brackets.
func vec(hash, components string) string {
	return `{"hash":"` + hash + `","vector":[` + components + `]}`
}

// manyVectors returns n one-dimensional vectors with distinct hashes.
func manyVectors(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = vec(events.TextHash(fmt.Sprint(i)), "1")
	}
	return out
}

// components returns n copies of c, comma-separated.
func components(n int, c string) string {
	return strings.TrimSuffix(strings.Repeat(c+",", n), ",")
}

var embeddingDataSamples = []sample{
	{name: "embedded", eventType: events.TypeMemoryEmbedded, body: embedded("4", vec(teaHash, "0.5,-0.5,0.5,0.5"))},
	{name: "embedded two texts", eventType: events.TypeMemoryEmbedded,
		body: embedded("3", vec(teaHash, "0.1,0.2,0.3"), vec(nameHash, "-0.030390318,0.0072,1"))},
	{name: "embedded in every number form", eventType: events.TypeMemoryEmbedded,
		body: embedded("6", vec(teaHash, " 1e-3 , 2,-0, 0.25E+1,1.0 ,-7e0"))},
	{name: "embedded at float32's extremes", eventType: events.TypeMemoryEmbedded,
		body: embedded("3", vec(teaHash, "3.4028234663852886e38,-3.4028234663852886e38,1e-45"))},
	{name: "embedded one dimension", eventType: events.TypeMemoryEmbedded, body: embedded("1", vec(teaHash, "-1"))},
	{name: "embedded the most vectors", eventType: events.TypeMemoryEmbedded, body: embedded("1", manyVectors(events.MaxEmbeddedVectors)...)},
	{name: "embedded too many vectors", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", manyVectors(events.MaxEmbeddedVectors+1)...), field: "data.vectors"},
	{name: "embedded the most dims", eventType: events.TypeMemoryEmbedded,
		body: embedded("4096", vec(teaHash, components(events.MaxEmbeddingDims, "0.015625")))},
	{name: "embedded too many components", eventType: events.TypeMemoryEmbedded,
		body: embedded("4096", vec(teaHash, components(events.MaxEmbeddingDims+1, "0.015625"))), field: "data.vectors[0].vector"},
	{name: "embedded with the longest model", eventType: events.TypeMemoryEmbedded,
		body: strings.Replace(embedded("1", vec(teaHash, "1")), "text-embedding-3-small", strings.Repeat("m", events.MaxEmbeddingModelBytes), 1)},
	{name: "embedded with a model of 201 bytes", eventType: events.TypeMemoryEmbedded,
		body:  strings.Replace(embedded("1", vec(teaHash, "1")), "text-embedding-3-small", strings.Repeat("m", events.MaxEmbeddingModelBytes+1), 1),
		field: "data.model"},
	{name: "embedded with a model of 100 characters, 300 bytes", eventType: events.TypeMemoryEmbedded,
		body:  strings.Replace(embedded("1", vec(teaHash, "1")), "text-embedding-3-small", strings.Repeat("模", 100), 1),
		field: "data.model", goOnly: bytesNotChars},
	{name: "embedded with an empty model", eventType: events.TypeMemoryEmbedded,
		body: strings.Replace(embedded("1", vec(teaHash, "1")), "text-embedding-3-small", "", 1), field: "data.model"},
	{name: "embedded with a newline in the model", eventType: events.TypeMemoryEmbedded,
		body: strings.Replace(embedded("1", vec(teaHash, "1")), "text-embedding-3-small", `bge\nm3`, 1), field: "data.model"},
	{name: "embedded without a model", eventType: events.TypeMemoryEmbedded,
		body: `{"dims":1,"vectors":[` + vec(teaHash, "1") + `]}`, field: "data.model"},
	{name: "embedded without dims", eventType: events.TypeMemoryEmbedded,
		body: `{"model":"m","vectors":[` + vec(teaHash, "1") + `]}`, field: "data.dims"},
	{name: "embedded without vectors", eventType: events.TypeMemoryEmbedded, body: `{"model":"m","dims":1}`, field: "data.vectors"},
	{name: "embedded no vectors", eventType: events.TypeMemoryEmbedded, body: embedded("1"), field: "data.vectors"},
	{name: "embedded null vectors", eventType: events.TypeMemoryEmbedded, body: `{"model":"m","dims":1,"vectors":null}`, field: "data.vectors"},
	{name: "embedded 0 dims", eventType: events.TypeMemoryEmbedded, body: embedded("0", vec(teaHash, "1")), field: "data.dims"},
	{name: "embedded 4097 dims", eventType: events.TypeMemoryEmbedded, body: embedded("4097", vec(teaHash, "1")), field: "data.dims"},
	{name: "embedded fractional dims", eventType: events.TypeMemoryEmbedded, body: embedded("1.5", vec(teaHash, "1")), field: "data.dims"},
	{name: "embedded dims as a string", eventType: events.TypeMemoryEmbedded, body: embedded(`"1"`, vec(teaHash, "1")), field: "data.dims"},
	{name: "embedded dims written 1e0", eventType: events.TypeMemoryEmbedded, body: embedded("1e0", vec(teaHash, "1"))},
	{name: "vector shorter than dims", eventType: events.TypeMemoryEmbedded,
		body: embedded("4", vec(teaHash, "0.5,0.5,0.5")), field: "data.vectors[0].vector", goOnly: cannotCompare},
	{name: "vector longer than dims", eventType: events.TypeMemoryEmbedded,
		body: embedded("2", vec(teaHash, "0.5,0.5"), vec(nameHash, "0.5,0.5,0.5")), field: "data.vectors[1].vector", goOnly: cannotCompare},
	{name: "vector of zeros", eventType: events.TypeMemoryEmbedded, body: embedded("3", vec(teaHash, "0,0,0")), field: "data.vectors[0].vector"},
	{name: "vector of zeros in other forms", eventType: events.TypeMemoryEmbedded,
		body: embedded("4", vec(teaHash, "-0,0.0,0e5,-0.000")), field: "data.vectors[0].vector"},
	{name: "vector too small for float32", eventType: events.TypeMemoryEmbedded,
		body: embedded("2", vec(teaHash, "1e-50,0")), field: "data.vectors[0].vector", goOnly: float32Rounding},
	{name: "empty vector", eventType: events.TypeMemoryEmbedded, body: embedded("1", vec(teaHash, "")), field: "data.vectors[0].vector"},
	{name: "vector over float32's range", eventType: events.TypeMemoryEmbedded,
		body: embedded("2", vec(teaHash, "0.5,1e39")), field: "data.vectors[0].vector[1]"},
	{name: "vector under float32's range", eventType: events.TypeMemoryEmbedded,
		body: embedded("3", vec(teaHash, "0.5,0.5,-4e38")), field: "data.vectors[0].vector[2]"},
	{name: "vector with a huge exponent", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", vec(teaHash, "1e400")), field: "data.vectors[0].vector[0]"},
	{name: "vector with a string", eventType: events.TypeMemoryEmbedded,
		body: embedded("2", vec(teaHash, `0.5,"0.5"`)), field: "data.vectors[0].vector[1]"},
	{name: "vector with null", eventType: events.TypeMemoryEmbedded,
		body: embedded("3", vec(teaHash, `0.5,0.5,null`)), field: "data.vectors[0].vector[2]"},
	{name: "vector with true", eventType: events.TypeMemoryEmbedded,
		body: embedded("2", vec(teaHash, `true,0.5`)), field: "data.vectors[0].vector[0]"},
	{name: "vector of vectors", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", vec(teaHash, `[0.5]`)), field: "data.vectors[0].vector[0]"},
	{name: "vector with an object", eventType: events.TypeMemoryEmbedded,
		body: embedded("2", vec(teaHash, `0.5,{"x":1}`)), field: "data.vectors[0].vector[1]"},
	{name: "vector in base64", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", `{"hash":"`+teaHash+`","vector":"AACAPw=="}`), field: "data.vectors[0].vector"},
	{name: "vector as an object", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", `{"hash":"`+teaHash+`","vector":{"0":1}}`), field: "data.vectors[0].vector"},
	{name: "vector as null", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", `{"hash":"`+teaHash+`","vector":null}`), field: "data.vectors[0].vector"},
	{name: "vector without components", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", `{"hash":"`+teaHash+`"}`), field: "data.vectors[0].vector"},
	{name: "vector without a hash", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", `{"vector":[1]}`), field: "data.vectors[0].hash"},
	{name: "hash in upper case", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", vec(strings.ToUpper(teaHash), "1")), field: "data.vectors[0].hash"},
	{name: "hash of 64 digits", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", vec(teaHash+teaHash, "1")), field: "data.vectors[0].hash"},
	{name: "hash of 31 digits", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", vec(teaHash[:31], "1")), field: "data.vectors[0].hash"},
	{name: "hash as a number", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", `{"hash":12,"vector":[1]}`), field: "data.vectors[0].hash"},
	{name: "hash twice", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", vec(teaHash, "1"), vec(nameHash, "1"), vec(teaHash, "-1")), field: "data.vectors[2].hash", goOnly: cannotCompare},
	{name: "vector with a memory id", eventType: events.TypeMemoryEmbedded,
		body: embedded("1", `{"hash":"`+teaHash+`","vector":[1],"memory_id":"m1"}`), field: "data.vectors[0].memory_id"},
	{name: "embedded with a session", eventType: events.TypeMemoryEmbedded,
		body: `{"model":"m","dims":1,"vectors":[` + vec(teaHash, "1") + `],"session_id":"s1"}`, field: "data.session_id"},
}

var embeddingEventSamples = []sample{
	{name: "embedded", body: with(m{"type": events.TypeMemoryEmbedded, "subject": drop, "source": "engram/embedder",
		"data": parsed(embedded("2", vec(teaHash, "0.6,-0.8")))})},
	{name: "embedded with a subject", body: with(m{"type": events.TypeMemoryEmbedded,
		"data": parsed(embedded("2", vec(teaHash, "0.6,-0.8")))}), field: "subject"},
	{name: "embedded with bad data", body: with(m{"type": events.TypeMemoryEmbedded, "subject": drop,
		"data": parsed(embedded("2", vec(teaHash, "0,0")))}), field: "data.vectors[0].vector"},
}
