package secrets

import (
	"strings"
	"testing"
)

// FuzzMask checks Mask's promises on any input: it never panics; the masked
// text holds no secret it found (outside the references, which are fixed
// shapes); every reference it reports is in the text; masking again
// changes nothing; and Contains agrees with Mask. The seed corpus is in
// testdata/fuzz/FuzzMask.
func FuzzMask(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		var m Masker
		masked, found := m.Mask(s)
		if got, want := m.Contains(s), len(found) > 0; got != want {
			t.Fatalf("Contains = %v, but Mask found %d secrets in %q", got, len(found), s)
		}
		for _, f := range found {
			if !strings.Contains(masked, f.Ref) {
				t.Fatalf("reference %q not in masked text %q", f.Ref, masked)
			}
		}
		// Text between references must hold none of the secrets.
		segments := reRef.Split(masked, -1)
		for _, sp := range find(s) {
			if len(sp.secret) < maxRepeatMask {
				continue // short secrets can occur in unrelated text
			}
			for _, seg := range segments {
				if strings.Contains(seg, sp.secret) {
					t.Fatalf("masked text %q still holds secret %q (input %q)", masked, sp.secret, s)
				}
			}
		}
		again, found2 := m.Mask(masked)
		if again != masked || len(found2) != 0 {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q\n found %+v", s, masked, again, found2)
		}
	})
}
