package httpapi

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API's OpenAPI 3.1 document, served at GET /openapi.json.
// A test in internal/app holds it to the routes the server registers and
// validates the end-to-end tests' responses against it.
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(OpenAPI)
}
