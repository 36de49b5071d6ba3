package app

import (
	"fmt"

	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/stream"
)

// openInput serves engram.v1.<namespace>.events: agents on the bus send
// events there, never onto the MEMORY stream (their NATS permissions do
// not allow it), and get POST /v1/events' validation and answer.
func (a *App) openInput() error {
	srv := a.apiServer(stream.RoleIngest)
	srv.Searcher, srv.Memories, srv.Context, srv.Consolidation, srv.MCP = nil, nil, nil, nil, nil
	svc, err := natsapi.ServeInput(a.bus(stream.RoleIngest).nc, srv.BusInput(), Version, a.Log.Named("input"))
	if err != nil {
		return fmt.Errorf("nats input service: %w", err)
	}
	a.services = append(a.services, svc)
	return nil
}
