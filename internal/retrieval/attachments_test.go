package retrieval

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// attachmentsFixture is seed 000 §4.4's user: a sunset photo, the cat
// photo, the monthly sales report the agent made, an electricity invoice
// and a voice message, among turns that carry none.
func attachmentsFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	turn := func(session string, idx int, role, content string, age time.Duration, atts ...events.Attachment) {
		f.apply(user, events.TypeTurnRecorded, f.now.Add(-age),
			&events.TurnRecorded{SessionID: session, TurnIndex: idx, Role: role, Content: content, Attachments: atts})
	}
	day := 24 * time.Hour
	turn("s1", 0, "user", "给你看看我拍的照片", 9*day, events.Attachment{Name: "IMG_2041.jpg", Mime: "image/jpeg",
		URL: "https://im.test/2041.jpg", Description: "海边的日落，橙色的天空和几只海鸥"})
	turn("s1", 1, "assistant", "拍得真好看！", 9*day-time.Minute)
	turn("s2", 0, "user", "这是我家的猫", 8*day, events.Attachment{Name: "IMG_2077.jpg", Mime: "image/jpeg",
		URL: "https://im.test/2077.jpg", Description: "一只橘猫趴在沙发上"})
	turn("s2", 1, "assistant", "好可爱的橘猫", 8*day-time.Minute)
	turn("s3", 0, "user", "帮我整理一下这个月的销售数据，做成报告", 6*day)
	turn("s3", 1, "assistant", "做好了，见附件", 6*day-time.Minute, events.Attachment{Name: "report-2026-03.pdf",
		Mime: "application/pdf", Path: "/work/out/report-2026-03.pdf", Direction: events.DirectionOutbound,
		Description: "用户要求的月度销售报告"})
	turn("s4", 0, "user", "收到一张单据，先存一下", 4*day, events.Attachment{Name: "scan-0412.pdf", Mime: "application/pdf",
		Path: "/inbox/scan-0412.pdf", Description: "2026年3月的电费发票，金额 213 元"})
	turn("s5", 0, "user", "", 2*day, events.Attachment{Name: "voice-77.ogg", Mime: "audio/ogg",
		URL: "https://im.test/voice-77.ogg", Transcription: "明天帮我预约下午3点的会议"})
	turn("s5", 1, "user", "and this one for the insurance", 2*day-time.Minute, events.Attachment{Name: "IMG_3001.jpg",
		Mime: "image/jpeg", URL: "https://im.test/3001.jpg", Description: "a blue bike leaning on the garden fence"})
	turn("s6", 0, "user", "今天的照片都存好了吗", day)
	turn("s6", 1, "assistant", "都存好了", day-time.Minute)
	return f
}

// Seed 000 §4.4: "上次我发给你的那张猫的照片给我一下" finds the cat photo
// by its description, ahead of every other attachment; the report and the
// invoice are found by theirs, though their queries name no kind of file.
// Each query is asked as an agent asks it, through the pre-check.
func TestAttachmentsRankedByTheirOwnText(t *testing.T) {
	f := attachmentsFixture(t)
	e := NewEngine(f.st)
	e.Now = func() time.Time { return f.now }
	for _, c := range []struct{ query, want string }{
		{"上次我发给你的那张猫的照片给我一下", "IMG_2077.jpg"},
		{"把那份月度销售报告发我", "report-2026-03.pdf"},
		{"电费发票在哪", "scan-0412.pdf"},
		{"我让你预约的会议是几点", "voice-77.ogg"},
		{"send me that picture of my bike again", "IMG_3001.jpg"},
	} {
		t.Run(c.query, func(t *testing.T) {
			resp, err := e.Context(t.Context(), Request{User: "u", Query: c.query, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			atts := resp.Blocks.Attachments
			if len(atts) == 0 {
				t.Fatalf("no attachments (retrieved %v, %s)", resp.Retrieved, resp.Reason)
			}
			if got := attachmentName(atts[0]); got != c.want {
				t.Fatalf("first attachment = %s (%v), want %s", got, contents(atts), c.want)
			}
			for _, a := range atts[1:] {
				if a.Score >= atts[0].Score {
					t.Errorf("%s scores %v, not below the first's %v", attachmentName(a), a.Score, atts[0].Score)
				}
			}
		})
	}
	// A query about something no attachment shows lists none.
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "上次那张狗的照片呢", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(resp.Blocks.Attachments); len(got) != 0 {
		t.Errorf("a dog photo: attachments %v, want none", got)
	}
}

// GET /v1/search finds an attachment by its description, as an
// attachment: its own text, its turn's session and index.
func TestSearchFindsAttachmentByDescription(t *testing.T) {
	f := attachmentsFixture(t)
	for _, c := range []struct{ query, want string }{
		{"橘猫", "IMG_2077.jpg"},
		{"电费发票", "scan-0412.pdf"},
		{"月度销售报告", "report-2026-03.pdf"},
	} {
		res, err := f.search(c.query)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res, func(r memory.SearchResult) bool { return r.Kind == memory.ResultAttachment })
		if i < 0 {
			t.Errorf("%q: no attachment among %v", c.query, res)
			continue
		}
		if got := attachmentName(Item{Content: res[i].Content}); got != c.want {
			t.Errorf("%q: attachment %q, want %s", c.query, res[i].Content, c.want)
		}
		if res[i].SessionID == "" || res[i].TurnIndex < 0 {
			t.Errorf("%q: attachment without its turn: %+v", c.query, res[i])
		}
	}
}

// attachmentName is the file name an attachment item's content starts with.
func attachmentName(it Item) string {
	for i, r := range it.Content {
		if r == ':' {
			return it.Content[:i]
		}
	}
	return it.Content
}

func contents(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Content
	}
	return out
}
