package archtest

import (
	"os/exec"
	"testing"
)

// go.mod says which dependencies are direct: `go mod tidy` leaves it as it is.
func TestGoModTidy(t *testing.T) {
	out, err := exec.Command("go", "mod", "tidy", "-diff").CombinedOutput()
	if err != nil {
		t.Fatalf("go mod tidy -diff: %v; go.mod and go.sum are not tidy (run go mod tidy):\n%s", err, out)
	}
}
