package ruleextract

import (
	"regexp"
	"strings"
)

// Plans: "星河商城下周要升级到 Next.js 15", "we're migrating to Kubernetes
// next quarter". A plan is worth remembering as a plan (context, fading
// with time) and must never be stored as the thing done: a clause read as
// a plan yields no tool or version facts. Wishes and maybes ("I hope we
// switch…", "可能会用…") are not plans.
var (
	zhPlanMarkers = []string{
		"打算", "计划", "准备", "将要", "即将", "下周", "下个月", "下月", "下季度", "下个季度", "明天", "明年", "后天",
		"下个版本", "周一要", "周二要", "周三要", "周四要", "周五要", "周六要", "周日要", "月底要", "年底要",
	}
	zhPlanOngoing  = []string{"正在迁移", "正在升级", "正在切换", "正在从"}
	zhPlanUnsure   = []string{"可能", "也许", "或许", "如果", "假如", "要是", "想", "希望", "考虑", "要不要", "是否", "说不定", "不打算", "不准备", "没打算", "没计划", "不计划", "再说"}
	zhPlanActions  = []string{"升级", "迁移", "迁到", "上线", "发布", "部署", "切换", "换成", "换到", "改用", "重构", "学", "开始", "交", "搬", "做", "写", "去", "发版", "替换", "接入", "引入", "下线", "合并"}
	zhProjectPlans = []string{"升级", "迁移", "迁到", "上线", "发布", "部署", "切换", "换成", "换到", "改用", "重构", "发版", "替换", "接入", "引入", "下线", "合并"}

	reEnPlanIntent  = regexp.MustCompile(`\b(?:plan(?:s|ning)? to|going to|gonna|will|'ll|about to|scheduled to|set to)\s+([a-z]+)`)
	reEnPlanOngoing = regexp.MustCompile(`^(?:we|i)(?:'re|'m| are| am) ([a-z]+ing)\b`)
	reEnPlanDeictic = regexp.MustCompile(`^\s*(?:it|this|that|them|these|those)\b`)
	reEnPlanWhen    = regexp.MustCompile(`\b(?:next (?:week|month|quarter|year|sprint|release|monday|tuesday|wednesday|thursday|friday)|tomorrow|this (?:weekend|friday|sprint|quarter|month|year|summer|winter|spring|fall|autumn)|next (?:summer|winter|spring|fall|autumn)|later this (?:week|month|year)|on (?:monday|tuesday|wednesday|thursday|friday)|by (?:monday|tuesday|wednesday|thursday|friday|the end of))\b`)
	enPlanUnsure    = []string{"maybe", "might", "could", "should", "would", "if", "hope", "wish", "want", "wants", "perhaps", "thinking", "consider", "considering", "probably", "not", "never", "don't", "won't"}
	enNotPlanVerbs  = setOf("the", "a", "an", "my", "our", "your", "be", "have", "need", "try", "see", "think", "let", "get", "go", "do", "check", "look", "take", "make", "keep")
	enProjectPlans  = []string{"upgrad", "migrat", "launch", "releas", "deploy", "switch", "move", "moving", "ship", "roll", "replac", "rewrit", "refactor", "adopt", "merg", "retire", "sunset"}
)

// plan stores the clause as a plan and reports whether it was one.
func (x *extractor) plan(c *clause) bool {
	var project bool
	if c.zh {
		if containsAny(c.text, "决定", "商定", "敲定") {
			return false // a decision taken, dated ("决定下季度…")
		}
		if !(containsAny(c.text, zhPlanMarkers...) || containsAny(c.text, zhPlanOngoing...)) ||
			containsAny(c.text, zhPlanUnsure...) || !containsAny(c.text, zhPlanActions...) {
			return false
		}
		project = containsAny(c.text, zhProjectPlans...)
	} else {
		if containsWord(c.low, enPlanUnsure...) || containsAny(c.low, "decided", "agreed") {
			return false
		}
		verb := ""
		// "I'm going to lunch", "I'll review it tomorrow": an errand or a
		// step in this conversation; a plan says when, or what changes.
		if m := reEnPlanIntent.FindStringSubmatch(c.low); m != nil && !enNotPlanVerbs[m[1]] &&
			(strings.Contains(m[0], "plan") || reEnPlanWhen.MatchString(c.low) || hasPrefixAny(m[1], enProjectPlans)) &&
			!reEnPlanDeictic.MatchString(c.low[strings.Index(c.low, m[0])+len(m[0]):]) {
			verb = m[1]
		} else if m := reEnPlanOngoing.FindStringSubmatch(c.low); m != nil && m[1] != "going" &&
			(reEnPlanWhen.MatchString(c.low) || strings.HasPrefix(c.low, "we") && containsAny(m[1], enProjectPlans...)) {
			// "We're migrating the frontend to React": under way, not done.
			verb = m[1]
		}
		if verb == "" {
			return false
		}
		// "Next week we'll drop support for Python 3.8": what a team
		// plans is the project's, whatever the verb.
		project = containsAny(c.low, enProjectPlans...) || containsWord(c.low, "we", "we'll", "we're", "our", "us")
	}
	subject := "user"
	if project {
		subject = x.decisionSubject()
	}
	label := "Plan: "
	if c.zh {
		label = "计划："
	}
	x.add(fact{pred: PredPlan, subject: subject, content: label + c.text, conf: confClear, scoped: project})
	return true
}
