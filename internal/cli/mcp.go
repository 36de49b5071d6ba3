package cli

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/mcpserver"
)

// mcpCommand serves MCP on stdin and stdout for a host that starts engram
// as a subprocess (Claude Desktop, Cursor); each tool calls the HTTP API
// of a running engram (engram serve) with the token given.
func mcpCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("ENGRAM_HTTP_ADDR", "127.0.0.1:7420"), "the running engram's HTTP address (env ENGRAM_HTTP_ADDR)")
	token := fs.String("token", os.Getenv("ENGRAM_TOKEN"), "bearer token (env ENGRAM_TOKEN)")
	user := fs.String("user", os.Getenv("ENGRAM_USER"), "the user of tool calls that name none (env ENGRAM_USER); empty makes user required")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	srv := mcpserver.New(mcpserver.Remote("http://"+*addr, *token, nil), app.Version, *user)
	if err := mcpserver.ServeStdio(ctx, srv, os.Stdin, nopWriteCloser{stdout}); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "engram mcp: %v\n", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
