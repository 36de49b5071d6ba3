package dedupe

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// Synthetic makes n memories for measuring dedupe, the same for the same
// seed: facts in English and Chinese, most of them written several times
// over (2 to 18 variants, about 10) with the small edits a model makes when
// it extracts the same fact twice — punctuation, case, word order, a word
// changed, added or dropped, in Chinese a character — and about one item in
// ten a fact said once. Some facts have a near-miss sibling (a few words
// different) that should stay apart. Items spread over four partitions,
// plus one of six items, below MinPartition.
func Synthetic(n int, seed uint64) []Item {
	g := &generator{rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	var items []Item
	add := func(part, text string) {
		items = append(items, Item{
			Text:       text,
			Importance: float64(1+g.rng.IntN(20)) / 20,
			Updated:    synthEpoch.Add(time.Duration(g.rng.IntN(90*24)) * time.Hour),
			Partition:  part,
		})
	}
	small := min(6, n)
	for len(items) < n-small {
		part := synthPartitions[g.rng.IntN(len(synthPartitions))]
		zh := g.rng.IntN(5) < 2
		base := g.fact(part, zh)
		size := 1
		if g.rng.IntN(2) == 0 {
			size = 2 + g.rng.IntN(17)
		}
		size = min(size, n-small-len(items))
		add(part, base)
		for range size - 1 {
			add(part, g.variant(base, zh))
		}
		if size > 1 && g.rng.IntN(10) == 0 && len(items) < n-small {
			sibling := base
			for range 4 {
				sibling = g.changeWord(sibling, zh)
			}
			add(part, sibling)
		}
	}
	for len(items) < n {
		text := g.fact("misc/notes", false)
		if len(items) > n-small/2 {
			text = g.variant(items[len(items)-1].Text, false)
		}
		add("misc/notes", text)
	}
	g.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	for i := range items {
		items[i].ID = fmt.Sprintf("m%06d", i)
	}
	return items
}

var synthEpoch = time.Date(2025, 1, 6, 4, 0, 0, 0, time.UTC)

var synthPartitions = []string{"engram/storage", "engram/retrieval", "myclaw/deploy", "life/preferences"}

var synthCommon = strings.Fields(`the the the of of and and to to in in for with on at by is is was uses from that this`)

var synthWords = strings.Fields(`postgres sqlite redis kafka nats stream index query schema migration backup replica cluster
node shard partition vector embedding token prompt model agent session turn memory episode profile summary scratchpad
deploy release rollback canary staging production docker kubernetes helm terraform ansible nginx caddy grpc http json
yaml toml config secret vault password certificate domain dns latency throughput timeout retry backoff queue worker
cron schedule monday tuesday weekend morning evening night coffee tea green black espresso oolong jasmine breakfast
lunch dinner vegetarian spicy noodles dumplings rice bread cheese apple mango running cycling swimming hiking yoga
chess piano guitar novel poetry history physics chemistry biology python golang rust typescript java kotlin swift
vim emacs vscode terminal tmux zsh bash linux macos windows laptop monitor keyboard mouse headphones camera phone
berlin tokyo shanghai beijing london paris seattle boston austin toronto sydney singapore daughter son wife husband
mother father sister brother friend manager colleague team customer invoice budget deadline meeting review design
document report dashboard alert metric incident outage postmortem ticket sprint roadmap milestone launch feature bug
fix test benchmark profile cache eviction compaction vacuum checkpoint wal journal snapshot restore archive decay
importance confidence threshold cluster merge dedupe shingle jaccard minhash bucket band signature hash seed random
quiet gap daily weekly hourly monthly yearly january february march april may june july august september october
november december blue green red yellow purple orange small large quick slow careful strict relaxed prefers dislikes
avoids enjoys needs wants always never usually sometimes often rarely early late remote office home hybrid train
bus bike car flight hotel visa passport dentist doctor gym library museum concert garden kitchen balcony window`)

var synthTopics = map[string][]string{
	"engram/storage":   strings.Fields(`sqlite wal vacuum checkpoint schema migration index journal snapshot backup`),
	"engram/retrieval": strings.Fields(`query index vector embedding rerank recall budget token prompt memory`),
	"myclaw/deploy":    strings.Fields(`deploy release rollback canary staging production docker kubernetes helm nginx`),
	"life/preferences": strings.Fields(`coffee tea breakfast vegetarian running yoga piano novel weekend morning`),
	"misc/notes":       strings.Fields(`note reminder todo idea link draft`),
}

var synthZh = strings.Fields(`用户 喜欢 数据 服务 部署 配置 项目 数据库 索引 查询 记忆 会话 模型 提示 向量 检索 排序 预算 上下文 摘要
周一 周末 早上 晚上 咖啡 绿茶 红茶 早餐 午饭 晚饭 素食 辣味 面条 饺子 米饭 跑步 骑车 游泳 爬山 瑜伽 钢琴 吉他 小说 历史
物理 化学 北京 上海 深圳 杭州 成都 东京 伦敦 巴黎 女儿 儿子 妻子 丈夫 母亲 父亲 朋友 经理 同事 团队 客户 发票 截止 会议
评审 设计 文档 报告 告警 指标 故障 复盘 工单 迭代 路线 里程 发布 功能 缺陷 修复 测试 压测 缓存 淘汰 压缩 快照 恢复 归档
衰减 重要 置信 阈值 聚类 合并 去重 哈希 分桶 签名 随机 安静 每天 每周 每月 一月 二月 三月 四月 五月 六月 七月 八月 九月
十月 蓝色 绿色 红色 黄色 紫色 橙色 小型 大型 快速 缓慢 仔细 严格 轻松 偏好 讨厌 避免 享受 需要 希望 总是 从不 通常 有时
经常 很少 提前 推迟 远程 办公 在家 混合 火车 公交 单车 汽车 航班 酒店 签证 护照 牙医 医生 健身 图书 博物 音乐 花园 厨房
阳台 窗户 版本 升级 回滚 灰度 生产 容器 集群 节点 分片 分区 主题 令牌 延迟 吞吐 超时 重试 退避 队列 任务 定时 证书 域名`)

var synthZhTopics = map[string][]string{
	"engram/storage":   strings.Fields(`数据库 索引 快照 归档 压缩 恢复 分区 版本`),
	"engram/retrieval": strings.Fields(`检索 排序 向量 查询 预算 上下文 记忆 令牌`),
	"myclaw/deploy":    strings.Fields(`部署 发布 回滚 灰度 生产 容器 集群 节点`),
	"life/preferences": strings.Fields(`咖啡 绿茶 早餐 素食 跑步 瑜伽 钢琴 周末`),
	"misc/notes":       strings.Fields(`提醒 想法 草稿 链接`),
}

// synthZhFillers are single characters a variant inserts or swaps in.
var synthZhFillers = []rune("的了也都在和是很又还")

var synthEnPunct = []string{",", ";", " -", ":"}

var synthZhPunct = []string{"，", "、", "；", "："}

type generator struct{ rng *rand.Rand }

// fact is a sentence long enough that one changed word keeps it above the
// merge threshold from the original (Jaccard over about 25 distinct words or
// 50 character pairs), with some words from its partition's topic.
func (g *generator) fact(part string, zh bool) string {
	if zh {
		words := 28 + g.rng.IntN(7)
		var b strings.Builder
		for i := range words {
			if i > 0 && i%7 == 0 {
				b.WriteString(synthZhPunct[0])
			}
			if g.rng.IntN(4) == 0 {
				b.WriteString(pick(g.rng, synthZhTopics[part]))
			} else {
				b.WriteString(pick(g.rng, synthZh))
			}
		}
		b.WriteString("。")
		return b.String()
	}
	words := 30 + g.rng.IntN(8)
	out := make([]string, words)
	for i := range out {
		switch g.rng.IntN(10) {
		case 0, 1:
			out[i] = pick(g.rng, synthCommon)
		case 2, 3:
			out[i] = pick(g.rng, synthTopics[part])
		default:
			out[i] = pick(g.rng, synthWords)
		}
		if i > 0 && i%9 == 0 {
			out[i-1] += synthEnPunct[0]
		}
	}
	s := strings.Join(out, " ") + "."
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// variant makes one small edit of base.
func (g *generator) variant(base string, zh bool) string {
	switch g.rng.IntN(6) {
	case 0:
		return g.punctuate(base, zh)
	case 1:
		if zh {
			return g.changeChar(base)
		}
		return strings.ToLower(base)
	case 2:
		return g.changeWord(base, zh)
	case 3:
		return g.insert(base, zh)
	case 4:
		if zh {
			return g.changeChar(base)
		}
		return g.swapWords(base)
	default:
		return g.drop(base, zh)
	}
}

func (g *generator) punctuate(s string, zh bool) string {
	set := synthEnPunct
	if zh {
		set = synthZhPunct
	}
	return strings.ReplaceAll(s, set[0], pick(g.rng, set[1:]))
}

func (g *generator) changeWord(s string, zh bool) string {
	if zh {
		r := []rune(s)
		w := []rune(pick(g.rng, synthZh))
		i := g.rng.IntN(len(r) - 2)
		if chars.IsCJK(r[i]) && chars.IsCJK(r[i+1]) {
			r[i], r[i+1] = w[0], w[1]
		}
		return string(r)
	}
	words := strings.Fields(s)
	i := g.rng.IntN(len(words))
	trail := strings.TrimLeft(words[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	words[i] = pick(g.rng, synthWords) + trail
	return strings.Join(words, " ")
}

func (g *generator) changeChar(s string) string {
	r := []rune(s)
	i := g.rng.IntN(len(r) - 1)
	if chars.IsCJK(r[i]) {
		r[i] = synthZhFillers[g.rng.IntN(len(synthZhFillers))]
	}
	return string(r)
}

func (g *generator) insert(s string, zh bool) string {
	if zh {
		r := []rune(s)
		i := 1 + g.rng.IntN(len(r)-1)
		return string(r[:i]) + string(synthZhFillers[g.rng.IntN(len(synthZhFillers))]) + string(r[i:])
	}
	words := strings.Fields(s)
	i := 1 + g.rng.IntN(len(words)-1)
	words = append(words[:i], append([]string{pick(g.rng, []string{"really", "now", "still", "also", "definitely"})}, words[i:]...)...)
	return strings.Join(words, " ")
}

func (g *generator) drop(s string, zh bool) string {
	if zh {
		// Dropping the full stop changes no shingle; dropping a comma joins
		// two runs into one more character pair.
		if g.rng.IntN(2) == 0 {
			return strings.TrimSuffix(s, "。")
		}
		return strings.Replace(s, synthZhPunct[0], "", 1)
	}
	words := strings.Fields(s)
	i := 1 + g.rng.IntN(len(words)-2)
	return strings.Join(append(words[:i], words[i+1:]...), " ")
}

func (g *generator) swapWords(s string) string {
	words := strings.Fields(s)
	i := g.rng.IntN(len(words) - 1)
	words[i], words[i+1] = words[i+1], words[i]
	return strings.Join(words, " ")
}

func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }
