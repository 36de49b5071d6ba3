package retrieval

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
)

// The defects of issue 9, each as a test: what recall missed on
// conversations engram was never tuned on.

// fixture builds a read model event by event.
type fixture struct {
	t   *testing.T
	st  *sqlite.Store
	seq uint64
	now time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return &fixture{t: t, st: st, now: time.Now().UTC()}
}

func (f *fixture) apply(scope memory.Scope, typ string, at time.Time, data any) {
	f.t.Helper()
	f.seq++
	for _, err := range f.st.Apply(f.t.Context(), []memory.Applied{{Envelope: memory.Envelope{Seq: f.seq, Source: "t",
		ID: fmt.Sprint(f.seq), Type: typ, Scope: scope, Time: at}, Data: data}}) {
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// memory adds a memory of kind with content, written age ago.
func (f *fixture) memory(scope memory.Scope, id, kind, content string, age time.Duration) {
	f.t.Helper()
	f.apply(scope, events.TypeMemoryAdded, f.now.Add(-age), &events.MemoryAdded{MemoryID: id, Kind: kind, Category: "decision",
		Subject: "user", Predicate: "note", Content: content, Importance: 0.5, Confidence: 1})
}

func (f *fixture) turns(scope memory.Scope, session string, age time.Duration, contents ...string) {
	f.t.Helper()
	for i, c := range contents {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		f.apply(scope, events.TypeTurnRecorded, f.now.Add(-age+time.Duration(i)*time.Minute),
			&events.TurnRecorded{SessionID: session, TurnIndex: i, Role: role, Content: c})
	}
}

// search asks GET /v1/search's question of user's memory.
func (f *fixture) search(q string) ([]memory.SearchResult, error) {
	e := NewEngine(f.st)
	e.Now = func() time.Time { return f.now }
	return e.Search(f.t.Context(), memory.SearchQuery{Scope: user, Text: q, Limit: 10})
}

// wantMemoryAmong asks query and fails the test unless memory want is
// among the memories recalled.
func (f *fixture) wantMemoryAmong(query, want string) {
	f.t.Helper()
	resp := f.ask(Request{Query: query})
	if got := ids(resp.Blocks.Memories); !slices.Contains(got, want) {
		f.t.Fatalf("%q: memories = %v, want %s among them", query, got, want)
	}
}

// wantFirstMemory asks query and fails the test unless memory want comes
// first.
func (f *fixture) wantFirstMemory(query, want string) {
	f.t.Helper()
	resp := f.ask(Request{Query: query})
	if got := ids(resp.Blocks.Memories); len(got) == 0 || got[0] != want {
		f.t.Errorf("%q: memories = %v, want %s first", query, got, want)
	}
}

func (f *fixture) ask(req Request) *Response {
	f.t.Helper()
	e := NewEngine(f.st)
	e.Now = func() time.Time { return f.now }
	if req.User == "" {
		req.User = "u"
	}
	req.Force = true
	req.TurnLimit = 10
	resp, err := e.Context(f.t.Context(), req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

func ids(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func turnContents(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Content
	}
	return out
}

var user = memory.Scope{Namespace: "default", User: "u"}

// fillers are memories that share the everyday words of a user's talk.
func (f *fixture) fillers(scope memory.Scope, n int) {
	topics := []string{"用户觉得最近工作很忙", "用户喜欢周末在家看电影", "用户觉得项目进度有点慢", "用户喜欢和朋友一起吃火锅",
		"User feels happy about the new office", "User likes long walks after dinner", "User was upset about the late train",
		"User feels the project is on track"}
	for i := range n {
		f.memory(scope, fmt.Sprintf("fill-%d", i), "fact", fmt.Sprintf("%s（第%d条）", topics[i%len(topics)], i), time.Duration(i+1)*time.Hour)
	}
}

// 1. A long Chinese question is searched by its bigrams, not as phrases
// that must occur verbatim: 巧克力蛋糕 and 帮忙做 are found inside it,
// however many clauses come before them.
func TestChineseQueryByBigrams(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 20)
	f.memory(user, "cake", "fact", "周六聚会用户负责带巧克力蛋糕", 48*time.Hour)
	f.memory(user, "help", "fact", "小李说周六可以帮忙做凉菜", 48*time.Hour)
	clauses := []string{"早上起床晚", "地铁人很多", "开会讨论预算", "中午吃面条", "下午写文档", "老板问进度", "同事请假",
		"电脑突然卡住", "重启好几次", "晚上加班", "回家路上堵车", "楼下超市关门", "外卖送错地址", "洗衣机坏掉",
		"物业打电话", "快递没拿到", "明天还要早起", "周末想去爬山", "天气预报说下雨", "朋友约吃饭", "妈妈打电话",
		"房租要交", "信用卡还款", "健身房续费", "牙医预约", "车子保养", "猫粮快吃完", "阳台花枯萎", "书没看完",
		"电影票买错", "手机屏幕裂开", "耳机丢失", "钥匙忘带"}
	query := strings.Join(clauses, "，") + "。周六那个聚会我可以带巧克力蛋糕吗，小李还可以帮忙做什么"
	resp := f.ask(Request{Query: query})
	got := ids(resp.Blocks.Memories)
	if len(got) < 2 || !slices.Contains(got[:2], "cake") || !slices.Contains(got[:2], "help") {
		t.Fatalf("memories = %v, want cake and help first", got)
	}
}

// 2. No silent cap: the cue at the end of a long question is searched.
func TestLongQueryKeepsItsEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 20)
	f.memory(user, "vet", "fact", "User's dog Biscuit sees the vet at Riverside Animal Clinic", 72*time.Hour)
	var long strings.Builder
	for i := range 40 {
		fmt.Fprintf(&long, "word%d ", i)
	}
	long.WriteString("so anyway which clinic does Biscuit go to")
	resp := f.ask(Request{Query: long.String()})
	if got := ids(resp.Blocks.Memories); len(got) == 0 || got[0] != "vet" {
		t.Fatalf("memories = %v, want vet first", got)
	}
}

// A long Chinese question typed as one run of clauses is read clause by
// clause, as sentences are: what it asks, at the end, outweighs the scene
// the clauses before it set, even when the scene shares more words with
// another memory.
func TestLongChineseQuestionAsksAtTheEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 20)
	f.memory(user, "checkup", "fact", "王姐的健康证 12 月到期，店里两个人都要去体检办证", 20*24*time.Hour)
	f.memory(user, "waist", "fact", "医生说腰椎间盘突出先做理疗，不一定要开刀", 60*24*time.Hour)
	resp := f.ask(Request{Query: "最近天一冷店里事情也多，王姐说她也要去体检办证，我自己腰又不舒服，好多事情堆在一起，我想问下医生到底是咋说的，是不是一定要开刀"})
	if got := ids(resp.Blocks.Memories); len(got) == 0 || got[0] != "waist" {
		t.Fatalf("memories = %v, want waist first", got)
	}
}

// 3. recent_messages shape the raw turns too: a vague last utterance is
// answered from the turns its dialogue points at.
func TestRecentMessagesShapeTurns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "old", 30*24*time.Hour, "我们去了青城山徒步，山顶风景特别好", "听起来很棒！",
		"周末打算把阳台的花重新换盆", "好的，记得用透气的陶盆。")
	f.turns(user, "other", 20*24*time.Hour, "今天开会讨论了预算", "预算定了吗？", "还没有，下周再说", "好的。")
	resp := f.ask(Request{Query: "那次是哪天来着？", RecentMessages: []Message{
		{Role: "user", Content: "我想再去一次青城山徒步"}, {Role: "assistant", Content: "好主意，上次你说山顶风景很好。"}}})
	got := turnContents(resp.Blocks.Turns)
	if len(got) == 0 || !strings.Contains(got[0], "青城山") {
		t.Fatalf("turns = %q, want the 青城山 turn first", got)
	}
}

// Among the turns a question reaches, the one that said what the best
// memory records comes first, though it shares no word with the
// question: "谈下来了 2450 签三年" answers "跟房东谈的房租最后是多少" only
// through the memory the question finds.
func TestMemoriesLeadToTheirTurns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 10)
	f.memory(user, "lease", "decision", "用户不搬铺子，跟房东刘老板谈成签三年合同，每月 2450，押一付三", 60*24*time.Hour)
	f.turns(user, "rent", 60*24*time.Hour, "房东刘老板说明年房租要涨到 2600", "可以跟他谈谈长租，锁定价格。",
		"我明天去找他试试", "好 谈下来了 2450 签三年 押一付三", "太好了！")
	f.turns(user, "tea", 50*24*time.Hour, "隔壁茶馆的房租听说也涨了", "最近很多铺面都在涨。")
	f.turns(user, "noodles", 30*24*time.Hour, "今天面发不起来", "水温多少？", "自来水 酵母照以前放的", "天冷了水温要调高。")
	resp := f.ask(Request{Query: "跟房东谈的房租最后是多少"})
	got := turnContents(resp.Blocks.Turns)
	if !slices.Contains(got[:min(2, len(got))], "好 谈下来了 2450 签三年 押一付三") {
		t.Fatalf("turns = %q, want the turn that settled the lease among the first two", got)
	}
	// A search ranks the turns alike.
	res, err := f.search("跟房东谈的房租最后是多少")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, r := range res {
		if r.Kind == memory.ResultTurn {
			found = append(found, r.Content)
		}
	}
	if !slices.Contains(found[:min(2, len(found))], "好 谈下来了 2450 签三年 押一付三") {
		t.Fatalf("search turns = %q, want the turn that settled the lease among the first two", found)
	}
}

// A memory that holds little of the question lends its words little: the
// best of a few unrelated memories does not steer the turns.
func TestUnrelatedMemoryDoesNotSteerTurns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.memory(user, "hike", "fact", "Sam went hiking at Mount Tam with friends on Friday and the view was great", 60*24*time.Hour)
	f.turns(user, "party", 30*24*time.Hour, "The birthday dinner for Ana is at the Thai place on Friday", "Nice, which one?",
		"The one on Pine Street, booked for eight", "Sounds good.")
	f.turns(user, "trail", 20*24*time.Hour, "Sam said the Friday evening hike at Mount Tam was great, friends loved the view, dinner after", "Great!")
	resp := f.ask(Request{Query: "where is the birthday dinner for Ana and her parents on Friday evening?"})
	got := turnContents(resp.Blocks.Turns)
	if len(got) == 0 || got[0] != "The birthday dinner for Ana is at the Thai place on Friday" {
		t.Fatalf("turns = %q, want the birthday dinner first", got)
	}
}

// 4. Access reinforcement cannot run away: a memory returned 50 times for
// one topic does not outrank the best match for another.
func TestAccessDoesNotRunAway(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 10)
	f.memory(user, "coffee", "preference", "User drinks oat milk latte every morning, coffee with oat milk", 90*24*time.Hour)
	f.memory(user, "tea", "preference", "User drinks jasmine tea in the afternoon, sometimes coffee", 90*24*time.Hour)
	f.apply(user, events.TypeMemoriesAccessed, f.now.Add(-time.Minute), &events.MemoriesAccessed{
		Accesses: []events.Access{{MemoryID: "tea", Count: 50, Last: f.now.Add(-time.Minute)}}})
	resp := f.ask(Request{Query: "what coffee with oat milk do I drink in the morning"})
	if got := ids(resp.Blocks.Memories); len(got) == 0 || got[0] != "coffee" {
		t.Fatalf("memories = %v, want coffee first whatever tea's 50 accesses", got)
	}
}

// 5. A user's ranking depends only on that user's data: the same top 10
// with and without 100 other namespaces loaded.
func TestRankingIgnoresOtherTenants(t *testing.T) {
	t.Parallel()
	build := func(others int) ([]string, []string) {
		f := newFixture(t)
		f.fillers(user, 30)
		f.memory(user, "a", "fact", "用户觉得新项目的进度很顺利", 5*time.Hour)
		f.memory(user, "b", "fact", "User feels happy that the billing project shipped", 6*time.Hour)
		f.turns(user, "s", 10*time.Hour, "我觉得这个项目进度很顺利", "太好了", "I feel happy the project shipped", "Congrats!")
		for i := range others {
			other := memory.Scope{Namespace: fmt.Sprintf("ns-%d", i), User: "u"}
			f.memory(other, fmt.Sprintf("x-%d", i), "fact", "项目 project 进度 happy 觉得 顺利", time.Hour)
			f.turns(other, "s", time.Hour, "project happy 项目 觉得", "ok")
		}
		resp := f.ask(Request{Query: "我觉得项目怎么样？ do I feel happy about the project"})
		return ids(resp.Blocks.Memories), ids(resp.Blocks.Turns)
	}
	m0, t0 := build(0)
	m1, t1 := build(100)
	if !slices.Equal(m0[:min(10, len(m0))], m1[:min(10, len(m1))]) || !slices.Equal(t0, t1) {
		t.Fatalf("alone: %v %v\nwith 100 namespaces: %v %v", m0, t0, m1, t1)
	}
}

// 6. A one-character noun is findable: seed 000 §4.4's own example finds
// the turn where the cat picture was sent.
func TestSingleCharacterNoun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "pics", 5*24*time.Hour, "这是我家猫今天晒太阳的样子，发你看看", "好可爱！橘色的毛好亮。",
		"明天要带它去打疫苗", "记得提前预约。")
	f.turns(user, "work", 2*24*time.Hour, "上次发给你的那份报告改好了吗", "改好了，已经发你邮箱。",
		"那我把链接发给老板", "好的，发给他之前再检查一遍。", "合同我晚点发给你", "收到。")
	resp := f.ask(Request{Query: "上次我发给你的那张猫的照片给我一下"})
	got := turnContents(resp.Blocks.Turns)
	if len(got) == 0 || !strings.Contains(got[0], "猫") {
		t.Fatalf("turns = %q, want the cat turn first", got)
	}
}

// A one-character verb is found by its bigram with the 了 after it: the
// run before 了 ("钱赔") shares nothing with "顺丰那单赔了我 800 块".
func TestSingleCharacterVerb(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 10)
	f.memory(user, "paid", "fact", "顺丰那单丢件最后赔了我 800 块", 3*24*time.Hour)
	f.wantMemoryAmong("钱赔了没", "paid")
}

// A query whose only content is cut by function words still finds what
// a plain bigram search finds: 买的 in "票买的几点的".
func TestBigramAcrossFunctionWord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 10)
	f.memory(user, "train", "fact", "国庆回老家，买的是 10 月 1 日早上 8:12 从西安北出发的高铁", 10*24*time.Hour)
	f.wantMemoryAmong("票买的几点的", "train")
}

// A one-character verb is a word of its own: "被罚" finds what says "被站长
// 罚了", though the two share no bigram.
func TestOneCharacterVerb(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 20)
	f.memory(user, "fined", "event", "没穿工服被站长罚了 100 元", 100*24*time.Hour)
	f.memory(user, "etc", "event", "ETC 这个月多扣了 320 元，已打客服申诉", 130*24*time.Hour)
	f.memory(user, "bike", "event", "电瓶车昨晚在楼下让人偷了，报了警", 60*24*time.Hour)
	for _, tc := range []struct{ query, want string }{
		{"被罚的那个钱是为啥", "fined"},
		{"扣钱扣错那个事后来咋样", "etc"},
		{"被偷的那次报案没", "bike"},
	} {
		f.wantFirstMemory(tc.query, tc.want)
	}
}

// 7. Paraphrase without a model: the concept lexicon and the kind a
// question asks for.
func TestParaphrase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 20)
	f.memory(user, "dark", "preference", "User prefers dark mode in every tool", 10*24*time.Hour)
	f.memory(user, "pr", "rule", "Never push directly to main; open a pull request", 10*24*time.Hour)
	f.memory(user, "font", "fact", "User installed the JetBrains Mono font last week", 5*24*time.Hour)
	f.memory(user, "backbone", "fact", "把论文模型的backbone从ResNet-50换成Swin-T，因为mIoU提升了2.3个点", 20*24*time.Hour)
	f.memory(user, "oom", "error", "验证阶段CUDA out of memory：验证循环没加torch.no_grad()，加上后解决", 20*24*time.Hour)
	f.memory(user, "metformin", "fact", "二甲双胍改成缓释片，每天晚饭后1g", 30*24*time.Hour)
	f.memory(user, "wedding", "event", "婚宴订在国庆节那天，在老家的饭店", 30*24*time.Hour)
	f.memory(user, "courier", "rule", "给客户发货一律走顺丰，运费到付", 30*24*time.Hour)
	f.memory(user, "cron", "fact", "每天凌晨三点用 cron 跑一次数据库导出", 20*24*time.Hour)
	f.memory(user, "throttle", "fact", "支付网关每秒超过 20 次请求就限流，返回 429", 20*24*time.Hour)
	f.memory(user, "acupuncture", "fact", "在中医院做了六次针灸，肩膀松多了", 40*24*time.Hour)
	f.memory(user, "tutoring", "fact", "给儿子报了物理补习班，周日上午上", 25*24*time.Hour)
	f.memory(user, "closed", "fact", "楼下理发店每周二关门", 50*24*time.Hour)
	f.memory(user, "roommate", "decision", "跟合租的室友约定晚上十一点以后不用洗衣机", 15*24*time.Hour)
	f.memory(user, "rent", "event", "房东通知明年房租涨到 3000", 12*24*time.Hour)
	f.memory(user, "screens", "rule", "Screen time for the kids: one hour on school days, two at weekends", 35*24*time.Hour)
	f.memory(user, "gluten", "fact", "The only gluten-free item on the menu is the almond cake", 45*24*time.Hour)
	for _, tc := range []struct{ query, want string }{
		{"Which theme do I like?", "dark"},
		{"How should I ship this fix?", "pr"},
		{"我喜欢什么主题？", "dark"},
		// A developer's Chinese names the English term's thing.
		{"当初为啥把主干网络给换掉了", "backbone"},
		{"之前一跑评估显存就爆，最后咋弄好的", "oom"},
		{"metformin 我现在什么剂量", "metformin"},
		// Colloquial Chinese names what was written down in standard words.
		{"我跟媳妇哪天办酒来着", "wedding"},
		{"寄件一般用哪家快递", "courier"},
		// A developer's Chinese names the English term and the other way round.
		{"那个定时任务几点跑", "cron"},
		{"why does the payment gateway throttle us", "throttle"},
		// Spoken words for what a note writes down otherwise.
		{"上回扎针扎了几次", "acupuncture"},
		{"孩子补课是哪天", "tutoring"},
		{"剪头的那家店礼拜几歇业", "closed"},
		{"当时说好的是啥", "roommate"},
		{"他说涨就涨 气人", "rent"},
		// Everyday English for what a note names otherwise.
		{"how much TV can Sam watch on a Tuesday", "screens"},
		{"do we have anything for celiac customers", "gluten"},
		{"what colour scheme do I go for", "dark"},
	} {
		f.wantFirstMemory(tc.query, tc.want)
	}
}

// A question that names a speaker prefers what that speaker said, even
// when the name is in half the turns and another speaker's turn shares
// more of the question's words.
func TestSpeakerNamed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lines := []struct{ speaker, text string }{
		{"Melanie", "Caroline told me the pottery class was great, the pottery class teacher was so kind"},
		{"Caroline", "My pottery class starts again next week"},
		{"Caroline", "I went hiking with friends"},
		{"Caroline", "Work was busy today"},
		{"Melanie", "The kids loved the beach"},
	}
	for i, l := range lines {
		f.apply(user, events.TypeTurnRecorded, f.now.Add(-time.Duration(10-i)*time.Hour),
			&events.TurnRecorded{SessionID: fmt.Sprintf("s%d", i), TurnIndex: 0, Role: "user", Speaker: l.speaker, Content: l.text})
	}
	resp := f.ask(Request{Query: "What did Caroline say about the pottery class?"})
	if got := turnContents(resp.Blocks.Turns); len(got) == 0 || got[0] != lines[1].text {
		t.Fatalf("turns = %q, want Caroline's first", got)
	}
}

// The category decay of seed 001 §8 is of importance: an event written
// half a year ago that answers the question still comes before a new one
// that only shares a word with it.
func TestDecayLeavesRelevanceFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 10)
	event := func(id, content string, age time.Duration) {
		f.apply(user, events.TypeMemoryAdded, f.now.Add(-age), &events.MemoryAdded{MemoryID: id, Kind: "context", Category: "event",
			Subject: "user", Predicate: "note", Content: content, Importance: 0.85, Confidence: 1})
	}
	event("engine", "用户在做像素解谜游戏《雾港信使》，引擎是 Unity 2022.3.21f1 LTS，用 URP 渲染管线", 200*24*time.Hour)
	event("wishlist", "截至 7 月底，《雾港信使》Steam 愿望单约 8,400", 90*24*time.Hour)
	resp := f.ask(Request{Query: "雾港信使用的 Unity 版本是多少"})
	if got := ids(resp.Blocks.Memories); len(got) == 0 || got[0] != "engine" {
		t.Fatalf("memories = %v, want engine first: its age lowers its importance, not its relevance", got)
	}
}
