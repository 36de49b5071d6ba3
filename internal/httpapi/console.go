package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
)

// consoleFiles is the web console: plain HTML, one JavaScript file and one
// stylesheet, served from the binary. It holds no data: every panel reads
// and writes through the HTTP API, with the namespace, user and token a
// person types in.
//
//go:embed console
var consoleFiles embed.FS

// consoleHandler serves the console under GET /console/ (the mux redirects
// /console there). The page is public, as /openapi.json is; the API calls
// it makes carry the bearer token.
func consoleHandler() http.Handler {
	sub, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix("/console/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// Scripts and styles only from engram itself: stored text that
		// slipped into markup still could not run.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
