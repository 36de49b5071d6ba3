package cli

import "io"

// consolidationCommand runs `engram rules …` and `engram migrate …`; ok
// is false for any other command.
func consolidationCommand(cmd string, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	return 0, false
}
