package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Flags are the command-line settings every engram process takes; each has
// the meaning of its ENGRAM_* variable and wins over it.
type Flags struct {
	Config     string
	DataDir    string
	HTTPAddr   string
	NATSListen string
	NATSURL    string
}

// Register adds the flags to fs, their help giving engram serve's defaults.
func (f *Flags) Register(fs *flag.FlagSet) { f.RegisterFor(fs, config.Default()) }

// RegisterFor adds the flags to fs, their help giving base's defaults (a
// worker's differ from engram serve's).
func (f *Flags) RegisterFor(fs *flag.FlagSet, base config.Config) {
	or := func(v, none string) string {
		if v == "" {
			return none
		}
		return v
	}
	fs.StringVar(&f.Config, "config", os.Getenv("ENGRAM_CONFIG"), "YAML config file (env ENGRAM_CONFIG)")
	fs.StringVar(&f.DataDir, "data-dir", "", "data directory (env ENGRAM_DATA_DIR, default "+base.DataDir+")")
	fs.StringVar(&f.HTTPAddr, "http-addr", "", "HTTP listen address (env ENGRAM_HTTP_ADDR, default "+or(base.HTTP.Addr, "none")+")")
	fs.StringVar(&f.NATSListen, "nats-listen", "", "embedded NATS listen address, \"\" = in-process only (env ENGRAM_NATS_LISTEN, default "+
		or(base.NATS.Listen, "in-process only")+")")
	fs.StringVar(&f.NATSURL, "nats-url", "", "external NATS URL; no embedded server (env ENGRAM_NATS_URL, default "+
		or(base.NATS.URL, "none: embedded")+")")
}

// Load builds the Config: base (the process's defaults), then the file,
// then the environment, then the flags that were given.
func (f *Flags) Load(fs *flag.FlagSet, base config.Config) (config.Config, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return config.Load(base, f.Config, func(name string) (string, bool) {
		if v, ok := f.flagFor(name, set); ok {
			return v, true
		}
		return os.LookupEnv(name)
	})
}

// flagFor is the value of the flag that stands for env, if it was set.
func (f *Flags) flagFor(env string, set map[string]bool) (string, bool) {
	switch env {
	case "ENGRAM_DATA_DIR":
		return f.DataDir, set["data-dir"]
	case "ENGRAM_HTTP_ADDR":
		return f.HTTPAddr, set["http-addr"]
	case "ENGRAM_NATS_LISTEN":
		return f.NATSListen, set["nats-listen"]
	case "ENGRAM_NATS_URL":
		return f.NATSURL, set["nats-url"]
	}
	return "", false
}

// NewLogger builds the process logger from the config.
func NewLogger(c config.Log, w io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(c.Level)
	if err != nil {
		return nil, err
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	if c.Format == "json" {
		encoder = zapcore.NewJSONEncoder(enc)
	} else {
		enc.EncodeLevel = zapcore.CapitalLevelEncoder
		encoder = zapcore.NewConsoleEncoder(enc)
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.AddSync(w), level)), nil
}

// Serve runs a process with roles until SIGINT or SIGTERM, then shuts
// down within the configured timeout. A second signal exits at once.
func Serve(name string, roles Roles, args []string, base config.Config) int {
	return serve(name, roles, args, base, os.Stderr)
}

func serve(name string, roles Roles, args []string, base config.Config, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f Flags
	f.RegisterFor(fs, base)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := f.Load(fs, base)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	log, err := NewLogger(cfg.Log, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	defer quiet.Do(log.Sync) // fails on a terminal (EINVAL); nothing is left to tell
	log = log.Named(name)

	unlock := func() {}
	if cfg.NATS.URL == "" {
		// The embedded server owns the data dir: two would corrupt it.
		if unlock, err = LockDataDir(cfg.DataDir); err != nil {
			log.Error("cannot use the data dir", zap.Error(err))
			return 1
		}
	}
	defer unlock()

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	a, sig, err := openWhenBusReady(cfg, roles, log, sigs)
	if err != nil {
		log.Error("start failed", zap.Error(err))
		return 1
	}
	if a == nil {
		log.Info("stopped while starting", zap.String("signal", sig.String()))
		return 0
	}
	sig = <-sigs
	log.Info("shutting down", zap.String("signal", sig.String()), zap.Duration("deadline", cfg.ShutdownTimeout))
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	go func() {
		// A second signal means now.
		<-sigs
		log.Warn("second signal: exiting at once")
		os.Exit(1)
	}()
	if err := a.Close(ctx); err != nil {
		log.Error("shutdown", zap.Error(err))
		return 1
	}
	log.Info("stopped")
	return 0
}

// busPatience is how long a process keeps trying to start while the bus
// does not answer: a cluster whose node has just restarted answers
// JetStream requests late, or not at all, while it elects leaders.
const busPatience = time.Minute

// openWhenBusReady opens an App, again while the error is the bus not
// answering in time (up to busPatience), as a worker restarted beside a
// restarting NATS node must. Any other error ends it. A signal while it
// waits stops it (nil App).
func openWhenBusReady(cfg config.Config, roles Roles, log *zap.Logger, sigs <-chan os.Signal) (*App, os.Signal, error) {
	deadline := time.Now().Add(busPatience)
	for {
		a := New(cfg, roles, log)
		err := a.Open(context.Background())
		if err == nil {
			return a, nil, nil
		}
		if !stream.NotReady(err) || time.Now().After(deadline) {
			return nil, nil, err
		}
		log.Warn("start failed: the bus did not answer in time; trying again", zap.Error(err))
		select {
		case sig := <-sigs:
			return nil, sig, nil
		case <-time.After(time.Second):
		}
	}
}

// WorkerDefaults adapts the defaults for a separate worker binary: it
// talks to an external NATS (nats://127.0.0.1:4222 unless told otherwise)
// and listens for HTTP on httpAddr ("" for none).
func WorkerDefaults(c config.Config, httpAddr string) config.Config {
	c.NATS.URL = "nats://127.0.0.1:4222"
	c.NATS.Listen = ""
	c.HTTP.Addr = httpAddr
	return c
}
