// Package secrets masks API keys, tokens, passwords and private keys in text
// before it reaches an LLM or a memory.
//
// Mask replaces each secret with a stable reference that never contains the
// secret: "[secret:<kind>#<hash>]", the kind and the first four hex digits
// of the secret's SHA-256 (16 bits: enough to tell two secrets apart in one
// conversation, too few to confirm a guess). The same secret always gets
// the same reference, in any process, so masking is deterministic and
// replay stays exact. A reference holds no ellipsis and no sentence
// punctuation, so no sentence splitter cuts the text around it (the old
// "sk-…a1b2" form was cut as if the sentence ended there).
//
// What it recognises: OpenAI and Anthropic keys, Stripe keys and webhook
// secrets, AWS access key ids, GitHub, GitLab, Hugging Face and npm tokens,
// Slack tokens and webhooks, SendGrid and Google API keys, JWTs, Bearer and Basic
// authorization values, PEM private key blocks, credentials in connection
// strings (postgres://user:pass@host), and values assigned to password-,
// token-, secret- or key-named fields in English and Chinese
// (password=…, "api_key": "…", 密码是…, 口令：…, 密钥：…).
//
// What it deliberately does not mask: high-entropy strings with no prefix
// and no key naming them. Git commit hashes, checksums, UUIDs and base64
// blobs look exactly like secrets and are everywhere in an agent's
// conversation; masking them would destroy the memory of which commit fixed
// which bug. A bare random token pasted with no context therefore passes
// through. Values that are code or placeholders rather than secrets
// (password=None, token: ${{ secrets.TOKEN }}, apiKey = process.env.KEY,
// password: string) are left alone too.
//
// Guarantees, checked by FuzzMask: Mask never panics; the masked text
// contains none of the secrets it found outside their references; masking is
// idempotent (Mask of masked text changes nothing), because references are
// never themselves matched.
//
// Concurrency: a Masker holds no state; its zero value (and a nil *Masker)
// is ready to use from many goroutines.
//
// Measured: package corpus holds 123 secret forms and 139 look-alikes;
// TestCorpus holds precision and recall at ≥ 0.95 and `engram-bench -only
// secrets` prints them.
//
// MaskJSON walks a document first, asking of each string what masking it
// would, and decodes it into Go values only when something may change:
// the walk never calls a document unchanged that decoding would mask.
//
// Testing: a table per pattern in both languages, a table of ordinary text
// (prose, code, commit hashes, URLs) that must come back unchanged, and the
// fuzz target FuzzMask with its seed corpus in testdata/fuzz/FuzzMask. The
// walk is held to decoding on the corpus in every JSON shape and by
// FuzzMaskJSONWalk.
package secrets
