package secrets

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Fake secrets shaped like real ones.
const (
	openAIKey    = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6l"
	openAILegacy = "sk-T3BlbkFJ4f8Kq2Lm9Np0Rs7Tu3Vw6Xy1Za5Bc8De2Fg"
	anthropicKey = "sk-ant-api03-Xy9Zq2Wv8Ut7Sr6Qp5On4Ml3Kj2Ih1Gf0Ed9Cb8Aa7Zz6Yy5Xx4Ww3Vv2Uu1Tt0-AbCdEf"
	awsKey       = "AKIAIOSFODNN7EXAMPLE"
	githubToken  = "ghp_1A2b3C4d5E6f7G8h9I0j1K2l3M4n5O6p7Q8r"
	githubPAT    = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345678"
	slackToken   = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	googleKey    = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	stripeKey    = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	jwtToken     = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemBlock     = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4UbaDzY7W+K3Ap0fZ\nq8b4Vb3Nz0sJkL9==\n-----END RSA PRIVATE KEY-----"
)

func TestPatterns(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, secret, kind string
		ref                    string // the exact reference, when the test pins it
	}{
		{"openai project key", "my key is " + openAIKey + " ok", openAIKey, "openai_key", ""},
		{"openai legacy key", "OPENAI_API_KEY=" + openAILegacy, openAILegacy, "openai_key", ""},
		{"anthropic key", "用这个 key：" + anthropicKey, anthropicKey, "anthropic_key", ""},
		{"aws access key", "aws_access_key_id = " + awsKey, awsKey, "aws_access_key", ""},
		{"github token", "export GITHUB_TOKEN=" + githubToken, githubToken, "github_token", ""},
		{"github fine-grained token", "token " + githubPAT, githubPAT, "github_token", ""},
		{"slack token", "SLACK_BOT_TOKEN: " + slackToken, slackToken, "slack_token", ""},
		{"google api key", "key=" + googleKey + "&q=x", googleKey, "google_api_key", ""},
		{"stripe key", "Stripe: " + stripeKey, stripeKey, "stripe_key", ""},
		{"jwt", "the session cookie is " + jwtToken, jwtToken, "jwt", ""},
		{"bearer token", "Authorization: Bearer abcdef0123456789abcdef0123456789", "abcdef0123456789abcdef0123456789", "bearer", ""},
		{"basic auth", "Authorization: Basic dXNlcjpodW50ZXIyMg==", "dXNlcjpodW50ZXIyMg==", "password", ""},
		{"pem private key", "here:\n" + pemBlock + "\nthanks", pemBlock, "private_key", ""},
		{"password assignment", "password=hunter22", "hunter22", "password", ""},
		{"password env", "DB_PASSWORD: s3cr3t!Pass", "s3cr3t!Pass", "password", ""},
		{"password json", `{"user": "ana", "password": "correct-horse-battery-9"}`, "correct-horse-battery-9", "password", ""},
		{"password prose", "the wifi password is Tr0ub4dor&3.", "Tr0ub4dor&3", "password", ""},
		{"password go", `cfg.Password := "Pa55w0rd!"`, "Pa55w0rd!", "password", ""},
		{"密码是", "我的密码是 hunter22", "hunter22", "password", ""},
		{"密码全角冒号", "数据库密码：P@ssw0rd2024，别外传", "P@ssw0rd2024", "password", ""},
		{"口令为", "服务器口令为abc12345。", "abc12345", "password", ""},
		{"密码改成了", "我把密码改成了 Xy7$kk9q", "Xy7$kk9q", "password", ""},
		{"密码设置为", "管理员密码设置为：Adm1n!2024", "Adm1n!2024", "password", ""},
		{"密钥", "API 密钥：a1b2c3d4e5f6g7h8", "a1b2c3d4e5f6g7h8", "generic_secret", ""},
		{"令牌", "访问令牌是 tok_9f8e7d6c5b4a3210", "tok_9f8e7d6c5b4a3210", "generic_secret", ""},
		{"api_key", "api_key=9f8e7d6c5b4a3210fedc", "9f8e7d6c5b4a3210fedc", "generic_secret", ""},
		{"token", "token: a8f5f167f44f4964e6c998dee827110c", "a8f5f167f44f4964e6c998dee827110c", "generic_secret", ""},
		{"client secret yaml", "client_secret: 'Zx9-Qw8_Er7Ty6Ui5Op4'", "Zx9-Qw8_Er7Ty6Ui5Op4", "generic_secret", ""},
		{"postgres url", "DATABASE_URL=postgres://admin:S3cretPass@db.example.com:5432/app", "S3cretPass", "connection_string", ""},
		{"mongodb srv url", "连接串 mongodb+srv://user:pa55word@cluster0.mongodb.net/db", "pa55word", "connection_string", ""},
		{"redis url no user", "redis://:hunter22@localhost:6379/0", "hunter22", "connection_string", ""},
	}
	var m Masker
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			masked, found := m.Mask(tc.in)
			if strings.Contains(masked, tc.secret) {
				t.Fatalf("masked text still holds the secret: %q", masked)
			}
			if len(found) != 1 {
				t.Fatalf("found %d secrets, want 1: %+v (masked %q)", len(found), found, masked)
			}
			f := found[0]
			if f.Kind != tc.kind {
				t.Errorf("kind = %q, want %q", f.Kind, tc.kind)
			}
			if !strings.Contains(masked, f.Ref) {
				t.Errorf("masked %q does not hold the reference %q", masked, f.Ref)
			}
			if strings.Contains(f.Ref, tc.secret) {
				t.Errorf("reference %q holds the secret", f.Ref)
			}
			if tc.ref != "" && f.Ref != tc.ref {
				t.Errorf("ref = %q, want %q", f.Ref, tc.ref)
			}
			if tc.ref == "" && !reHashRef.MatchString(f.Ref) {
				t.Errorf("ref = %q, want [secret:%s#xxxx]", f.Ref, tc.kind)
			}
			if !m.Contains(tc.in) {
				t.Errorf("Contains = false, want true")
			}
			if m.Contains(masked) {
				t.Errorf("Contains(masked) = true, want false: %q", masked)
			}
		})
	}
}

var reHashRef = regexp.MustCompile(`^\[secret:[a-z_]+#[0-9a-f]{4}\]$`)

func TestOrdinaryTextUnchanged(t *testing.T) {
	t.Parallel()
	cases := []string{
		"Let me check the token bucket algorithm in rate.go",
		"Set max_tokens: 4096 and temperature: 0.2",
		"commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the flaky test",
		"git log --oneline shows a1b2c3d as the culprit",
		"The password is too short; the password is required.",
		"密码是什么？忘记密码了怎么办",
		"See https://github.com/engramhq/engram/blob/main/README.md#install",
		"UUID 550e8400-e29b-41d4-a716-446655440000 belongs to the run",
		"image digest sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"password: ${DB_PASSWORD}",
		"def login(user, password=None):",
		"type Config struct { Password string `yaml:\"password\"` }",
		"const apiKey = process.env.API_KEY;",
		"token: ${{ secrets.GITHUB_TOKEN }}",
		"We use scikit-learn and sk-learn-compatible-estimators-for-pipelines",
		"secretName: db-creds",
		"tokenizer: cl100k_base",
		"Use a Bearer token in the Authorization header.",
		"password_min_length: 12",
		"access_token_url: https://example.com/oauth/token",
		"func (s *Store) Token() string { return s.token }",
		`if token == "" { return errEmpty }`,
		"请把 token 放到环境变量里，这个 API 的密钥需要从控制台获取",
		"The base64 of the logo is iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		"postgres://localhost:5432/app and https://example.com:8443/path",
		"task-manager-service-deployment-v2 is up",
		`encodeUserPassword: "encodeUserPassword",`,
		"password = user_password",
	}
	var m Masker
	for _, in := range cases {
		t.Run(in, func(t *testing.T) {
			masked, found := m.Mask(in)
			if masked != in || len(found) != 0 {
				t.Errorf("Mask changed ordinary text:\n in  %q\n out %q\n found %+v", in, masked, found)
			}
			if m.Contains(in) {
				t.Errorf("Contains = true, want false")
			}
		})
	}
}

func TestRefsAreStable(t *testing.T) {
	t.Parallel()
	var a, b Masker
	_, f1 := a.Mask("password=hunter22")
	_, f2 := b.Mask("数据库 password: hunter22")
	_, f3 := a.Mask("password=hunter23")
	if len(f1) != 1 || len(f2) != 1 || len(f3) != 1 {
		t.Fatalf("findings %v %v %v, want one each", f1, f2, f3)
	}
	if f1[0].Ref != f2[0].Ref {
		t.Errorf("same secret, different refs: %q vs %q", f1[0].Ref, f2[0].Ref)
	}
	if f1[0].Ref == f3[0].Ref {
		t.Errorf("different secrets, same ref %q", f1[0].Ref)
	}
}

func TestEveryOccurrenceMasked(t *testing.T) {
	t.Parallel()
	var m Masker
	in := "password=hunter22. Later I typed hunter22 again, and hunter22 once more."
	masked, found := m.Mask(in)
	if strings.Contains(masked, "hunter22") {
		t.Errorf("masked %q still holds the password", masked)
	}
	if len(found) != 1 {
		t.Errorf("found %d, want 1 finding for one secret: %+v", len(found), found)
	}
	if got, want := strings.Count(masked, found[0].Ref), 3; got != want {
		t.Errorf("ref appears %d times, want %d: %q", got, want, masked)
	}
}

func TestSeveralSecrets(t *testing.T) {
	t.Parallel()
	var m Masker
	in := "OPENAI_API_KEY=" + openAIKey + "\nAWS " + awsKey + "\n密码：P@ssw0rd2024\nBearer " + jwtToken
	masked, found := m.Mask(in)
	kinds := map[string]bool{}
	for _, f := range found {
		kinds[f.Kind] = true
	}
	for _, k := range []string{"openai_key", "aws_access_key", "password", "jwt"} {
		if !kinds[k] {
			t.Errorf("no %s finding in %+v", k, found)
		}
	}
	for _, s := range []string{openAIKey, awsKey, "P@ssw0rd2024", jwtToken} {
		if strings.Contains(masked, s) {
			t.Errorf("masked text still holds %q: %q", s, masked)
		}
	}
	if !strings.Contains(masked, "OPENAI_API_KEY=[secret:openai_key#") || !strings.Contains(masked, "Bearer [secret:jwt#") {
		t.Errorf("masked text lost its context: %q", masked)
	}
}

func TestIdempotent(t *testing.T) {
	t.Parallel()
	var m Masker
	in := "key " + openAIKey + ", password=hunter22, postgres://u:S3cretPass@h/db, 密码是 abc12345, " + pemBlock
	once, _ := m.Mask(in)
	twice, found := m.Mask(once)
	if twice != once {
		t.Errorf("second Mask changed the text:\n once  %q\n twice %q", once, twice)
	}
	if len(found) != 0 {
		t.Errorf("second Mask found %+v, want nothing", found)
	}
}

func TestZeroAndNilMasker(t *testing.T) {
	t.Parallel()
	var zero Masker
	var nilMasker *Masker
	for _, m := range []*Masker{&zero, nilMasker} {
		if out, _ := m.Mask("password=hunter22"); strings.Contains(out, "hunter22") {
			t.Errorf("Mask = %q, want the password masked", out)
		}
		if !m.Contains("token: a8f5f167f44f4964e6c998dee827110c") {
			t.Errorf("Contains = false, want true")
		}
	}
}

func BenchmarkMask(b *testing.B) {
	in := strings.Repeat("We deployed commit 3f2a9c1 to staging; the config lives in ./deploy/app.yaml and max_tokens: 4096. ", 4) +
		"password=hunter22 and the key " + openAIKey
	var m Masker
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		m.Mask(in)
	}
}

func TestManySecretsAllMasked(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 500 {
		b.WriteString("user" + strings.Repeat("x", i%7) + " password=Pw" + strings.Repeat("9", i%5) + "-" + string(rune('a'+i%26)) + "k3y\n")
	}
	var m Masker
	masked, _ := m.Mask(b.String())
	if strings.Contains(masked, "password=Pw") {
		t.Errorf("a password was left unmasked in a long text")
	}
}

// worstCaseInputs stress one loop each; BenchmarkWorstCaseInputs
// measures them (a quadratic path shows as seconds per op), the test only
// checks the output. Speed is never asserted in a test.
func worstCaseInputs() []string {
	const n = 64 << 10
	return []string{
		"password=hunter22 " + strings.Repeat("hunter22 ", n/9),
		strings.Repeat("password=a1b2c3d4e5 ", n/20),
		strings.Repeat("[secret:password#abcd] ", n/23),
		strings.Repeat("sk-…abcd ", n/11),
		"-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("AKIAIOSFODNN7EXAMPLE\n", n/21),
		strings.Repeat("token=", n/6),
		strings.Repeat("postgres://u:p@", n/15),
		strings.Repeat("密码是", n/9),
	}
}

func TestWorstCaseInputs(t *testing.T) {
	t.Parallel()
	var m Masker
	for _, in := range worstCaseInputs() {
		if out, _ := m.Mask(in); strings.Contains(out, "hunter22") || strings.Contains(out, "a1b2c3d4e5") {
			t.Errorf("%q…: a secret survived masking", in[:16])
		}
	}
}

func BenchmarkWorstCaseInputs(b *testing.B) {
	var m Masker
	for i, in := range worstCaseInputs() {
		b.Run(strconv.Itoa(i), func(b *testing.B) {
			for b.Loop() {
				m.Mask(in)
				m.Contains(in)
			}
		})
	}
}

// Defects found by trying it (issue 12): a lower-case key passed; masking
// masked text garbled it; a reference with an ellipsis was cut as if it
// ended a sentence, taking the text around it along.
func TestIssue12Defects(t *testing.T) {
	t.Parallel()
	var m Masker
	lower := "sk-abcdefghijklmnopqrstuvwx1234"
	if out, _ := m.Mask("my key " + lower + " works"); strings.Contains(out, lower) || !strings.HasPrefix(out, "my key ") || !strings.HasSuffix(out, " works") {
		t.Errorf("lower-case key: %q", out)
	}
	for _, in := range []string{
		"secret: [secret:generic_secret#4b0d]",
		"client_secret: [secret:generic_secret#4b0d",
		"[secret:generic_secret#4b0d",
		"the secret:generic_secret#4b0d]",
		"[secret:generic_secret#4b0d]",
		"token=[secret:generic_secret#4b0d] and password: hunter22x",
		"my key sk-proj-AbCd1234EfGh5678IjKl9012MnOp and more text after it",
		"api_key: sk-…AbCd and a second key sk-proj-ZyXw9876VuTs5432RqPo1098NmLk",
	} {
		once, _ := m.Mask(in)
		twice, _ := m.Mask(once)
		if twice != once || strings.Contains(once, "[secret:[secret:") {
			t.Errorf("Mask(%q) = %q, then %q", in, once, twice)
		}
		if strings.Contains(once, "…") && !strings.Contains(in, "…") {
			t.Errorf("Mask(%q) = %q: a reference must not hold an ellipsis, which cuts sentences", in, once)
		}
	}
	in := "my key sk-proj-AbCd1234EfGh5678IjKl9012MnOp and more text after it"
	out, _ := m.Mask(in)
	if !strings.HasPrefix(out, "my key [secret:openai_key#") || !strings.HasSuffix(out, "] and more text after it") {
		t.Errorf("Mask(%q) = %q, want the text around the key kept", in, out)
	}
}

func TestMaskJSON(t *testing.T) {
	t.Parallel()
	var m Masker
	in := `{"session_id":"sk-abcdefghijklmnopqrstuvwx1234","content":"key sk-abcdefghijklmnopqrstuvwx1234 <ok> & more",` +
		`"tool_calls":[{"input":{"password":"hunter22","max_tokens":"4096","apiKey":"abc123def456"}}],"n":1.50}`
	out, changed, err := m.MaskJSON([]byte(in))
	if err != nil || !changed {
		t.Fatalf("MaskJSON: changed %v, err %v", changed, err)
	}
	s := string(out)
	for _, leak := range []string{`"content":"key sk-`, "hunter22", "abc123def456"} {
		if strings.Contains(s, leak) {
			t.Errorf("%q left in %s", leak, s)
		}
	}
	for _, keep := range []string{`"session_id":"sk-abcdefghijklmnopqrstuvwx1234"`, `"max_tokens":"4096"`, `<ok> & more`, `"n":1.50`} {
		if !strings.Contains(s, keep) {
			t.Errorf("%q lost from %s", keep, s)
		}
	}
	again, changed, _ := m.MaskJSON(out)
	if changed || string(again) != s {
		t.Errorf("masking twice changed %s to %s", s, again)
	}
	plain := []byte(`{"content":"nothing to see"}`)
	if out, changed, _ := m.MaskJSON(plain); changed || string(out) != string(plain) {
		t.Errorf("plain JSON came back %s, changed %v", out, changed)
	}
}
