package textseg

import (
	"strings"

	"github.com/engramhq/engram/internal/chars"
)

// singleNouns are one-character Chinese nouns, and the verbs of everyday
// events (罚, 赔, 丢, 借, 修, 卖, 寄, …), that a person uses as a whole
// word (猫的照片, 买了车, 被罚的钱, 扣错了). Bigrams alone never find them
// when the characters around them differ between the question and what
// was said ("被罚" and "被站长罚了 100 元" share no bigram), so Understand
// searches each as a prefix term. The list keeps to everyday things: a
// character that is mostly part of other words (生, 学, 发) would match
// half of everything.
var singleNouns = wordSet(`
	猫 狗 鱼 鸟 马 牛 羊 猪 鸡 兔 虫
	车 船 票 书 笔 纸 包 伞 表 鞋 帽 衣 裤 床 桌 椅 灯 门 窗 墙 房 楼 屋 家
	药 病 痛 伤 牙 眼 耳 手 脚 腿 头 血
	茶 酒 饭 面 粥 菜 肉 蛋 奶 糖 盐 油 米 果 汤 水 冰
	钱 卡 礼 信 歌 戏 画 照 花 树 草 山 河 海 湖 雨 雪 风
	妈 爸 哥 姐 弟 妹 娃 儿 女 妻 夫 爷 奶 婆
	喝 吃 住 养 穿
	罚 赔 丢 偷 摔 涨 扣 借 骗 撞 吵 咬 欠
	修 卖 搬 退 换 租 考 输 赢 哭 骂 追 陪
	买 送 寄 订 收 交 付 打 拍
`)

// concepts are groups of words that ask for the same thing, in English and
// Chinese: a query word of a group brings the others in at a lower weight
// (expandWeight), which is how "which theme do I like?" finds "prefers
// dark mode" and "how should I ship this?" finds "open a pull request"
// without a model. Groups stay small and literal: a loose group turns
// every query into every memory.
var concepts = [][]string{
	{"like", "likes", "liked", "prefer", "prefers", "preferred", "preference", "favorite", "favourite", "love", "loves", "enjoy", "enjoys", "喜欢", "爱", "偏好", "最爱", "喜爱", "爱好"},
	{"dislike", "dislikes", "hate", "hates", "avoid", "讨厌", "不喜欢", "反感"},
	{"theme", "mode", "dark", "light", "colour", "color", "colorscheme", "colourscheme", "主题", "深色", "浅色", "暗色", "夜间"},
	{"ship", "deploy", "deployment", "release", "push", "merge", "rollout", "launch", "上线", "发布", "部署", "合并", "推送"},
	{"pr", "pull", "review", "branch", "main", "master", "合并请求", "分支", "代码审查"},
	{"rule", "rules", "always", "never", "must", "should", "规则", "必须", "不要", "别", "一定", "总是", "永远"},
	{"job", "work", "works", "company", "employer", "office", "career", "工作", "上班", "公司", "单位", "职业"},
	{"live", "lives", "living", "home", "moved", "move", "address", "city", "住", "住在", "搬家", "地址", "城市", "家"},
	{"name", "called", "名字", "叫", "姓名"},
	{"wife", "husband", "spouse", "partner", "老婆", "老公", "妻子", "丈夫", "爱人", "太太", "先生", "媳妇", "老伴"},
	{"kid", "kids", "child", "children", "孩子", "小孩", "娃"},
	{"son", "boy", "儿子", "小子"},
	{"daughter", "girl", "女儿", "闺女"},
	{"boss", "manager", "supervisor", "lead", "上司", "上级", "领导", "老板", "主管"},
	{"colleague", "coworker", "teammate", "同事"},
	{"friend", "friends", "buddy", "朋友", "好友", "哥们", "闺蜜"},
	{"alert", "alerts", "notification", "notify", "page", "oncall", "告警", "通知", "报警", "值班"},
	{"memory", "oom", "ram", "内存", "显存"},
	{"slow", "latency", "performance", "speed", "慢", "延迟", "性能", "卡"},
	{"test", "tests", "testing", "测试", "单测"},
	{"reply", "respond", "response", "answer", "style", "tone", "回复", "回答", "风格", "语气"},
	{"medication", "medicine", "pill", "pills", "drug", "dose", "药", "吃药", "用药"},
	{"mother", "mom", "mum", "mama", "妈妈", "母亲", "老妈", "妈"},
	{"father", "dad", "papa", "爸爸", "父亲", "老爸", "爸"},
	{"parents", "family", "父母", "家人", "爸妈"},
	{"pet", "pets", "animal", "cat", "dog", "kitten", "puppy", "宠物", "小动物", "猫", "狗", "猫咪", "狗狗"},
	{"doctor", "hospital", "clinic", "sick", "ill", "illness", "medicine", "health", "医生", "医院", "看病", "生病", "药", "身体", "体检"},
	{"trip", "travel", "vacation", "holiday", "flight", "journey", "旅行", "旅游", "出差", "度假", "航班", "机票"},
	{"food", "eat", "meal", "dinner", "lunch", "breakfast", "restaurant", "吃", "饭", "餐厅", "早饭", "午饭", "晚饭", "早餐", "午餐", "晚餐"},
	{"coffee", "latte", "espresso", "americano", "cappuccino", "咖啡", "拿铁", "美式"},
	{"drink", "drinks", "喝", "饮料"},
	{"sad", "upset", "down", "depressed", "unhappy", "lonely", "grief", "miss", "难过", "伤心", "郁闷", "心情", "想念", "失落"},
	{"stress", "stressed", "anxious", "worried", "worry", "nervous", "scared", "afraid", "panic", "焦虑", "压力", "担心", "紧张", "害怕", "慌"},
	{"tired", "exhausted", "drained", "burnout", "burned", "overwhelmed", "累", "疲惫", "太累", "撑不住", "心累"},
	{"angry", "annoyed", "frustrated", "furious", "生气", "气死", "烦", "恼火", "郁闷"},
	{"talk", "speech", "presentation", "stage", "conference", "speaking", "演讲", "分享", "讲座", "发言", "答辩"},
	{"quit", "resign", "resigned", "leave", "left", "辞职", "离职", "跳槽"},
	{"died", "death", "passed", "funeral", "去世", "过世", "葬礼", "走了"},
	{"breath", "breathing", "asthma", "inhaler", "哮喘", "呼吸", "喘"},
	{"happy", "glad", "excited", "proud", "开心", "高兴", "激动", "骄傲"},
	{"bug", "error", "crash", "fail", "failed", "failure", "broken", "exception", "报错", "错误", "崩溃", "失败", "异常", "故障"},
	{"fix", "fixed", "solve", "solved", "solution", "resolve", "resolved", "workaround", "修复", "解决", "搞定", "办法"},
	{"database", "db", "postgres", "postgresql", "mysql", "sqlite", "数据库"},
	{"language", "python", "go", "golang", "java", "typescript", "javascript", "rust", "语言"},
	{"editor", "ide", "vscode", "vim", "neovim", "nvim", "emacs", "sublime", "intellij", "jetbrains", "编辑器"},
	{"birthday", "anniversary", "生日", "纪念日"},
	{"money", "budget", "price", "cost", "salary", "pay", "钱", "预算", "价格", "工资", "花费"},
	{"car", "drive", "driving", "vehicle", "车", "开车", "汽车"},
	{"book", "books", "read", "reading", "novel", "书", "看书", "读书", "小说"},
	{"music", "song", "songs", "sing", "band", "concert", "音乐", "歌", "唱歌", "演唱会"},
	{"sport", "exercise", "gym", "run", "running", "swim", "workout", "运动", "健身", "跑步", "游泳", "锻炼"},
	{"photo", "picture", "image", "pic", "照片", "图片", "相片", "截图"},
	{"meeting", "meet", "call", "appointment", "会议", "开会", "见面", "约"},
	{"plan", "plans", "planning", "going", "next", "计划", "打算", "准备", "下周", "明年"},
	{"learn", "learning", "study", "course", "class", "学习", "课程", "上课", "学"},
	{"allergy", "allergic", "过敏"},
	{"weekend", "周末"},
	{"wedding", "marriage", "married", "engaged", "fiance", "fiancee", "fiancé", "婚礼", "结婚", "订婚", "求婚", "未婚夫", "未婚妻", "办酒", "摆酒", "喜酒", "婚宴", "酒席"},
	{"dentist", "tooth", "teeth", "牙医", "牙齿", "看牙", "补牙"},
	{"surgery", "operation", "手术", "开刀"},
	{"fever", "cold", "flu", "cough", "发烧", "感冒", "咳嗽", "流感"},
	{"interview", "面试"},
	{"promotion", "promoted", "晋升", "升职", "答辩"},
	{"offer", "hire", "hired", "hiring", "recruit", "招聘", "录用", "入职"},
	{"deadline", "due", "截止", "期限", "ddl"},
	{"rent", "lease", "landlord", "tenant", "租", "房租", "房东", "租房"},
	{"apartment", "flat", "house", "home", "房子", "公寓", "新房", "住房"},
	{"renovation", "remodel", "decorate", "装修", "翻新"},
	{"loan", "mortgage", "贷款", "房贷", "按揭", "月供", "还贷"},
	{"insurance", "保险", "医保"},
	{"tax", "taxes", "税", "报税", "个税"},
	{"flight", "plane", "airport", "飞机", "航班", "机场"},
	{"train", "railway", "高铁", "火车", "动车"},
	{"subway", "metro", "地铁"},
	{"taxi", "uber", "didi", "打车", "出租车", "滴滴"},
	{"hotpot", "火锅"},
	{"cake", "dessert", "蛋糕", "甜点"},
	{"tea", "茶", "喝茶", "泡茶"},
	{"server", "服务器", "机器"},
	{"cache", "redis", "缓存"},
	{"certificate", "cert", "ssl", "tls", "https", "证书"},
	{"password", "passwd", "credential", "credentials", "密码", "口令", "凭证"},
	{"api", "endpoint", "interface", "接口"},
	{"frontend", "front-end", "ui", "前端", "页面"},
	{"backend", "back-end", "后端", "服务端"},
	{"exam", "test", "quiz", "grade", "grades", "score", "考试", "成绩", "分数", "期末", "期中"},
	{"homework", "assignment", "作业"},
	{"teacher", "professor", "tutor", "老师", "教授", "家教"},
	{"parrot", "bird", "鹦鹉", "鸟"},
	{"turtle", "tortoise", "乌龟", "龟"},
	{"corgi", "柯基"},
	{"golden", "retriever", "金毛"},
	{"smoke", "smoking", "cigarette", "cigarettes", "烟", "抽烟", "吸烟", "戒烟"},
	{"beer", "wine", "alcohol", "drunk", "啤酒", "红酒", "喝酒", "酒"},
	{"sleep", "insomnia", "tired", "睡觉", "失眠", "睡眠"},
	{"weight", "diet", "lose", "减肥", "体重", "节食"},
	{"baby", "pregnant", "pregnancy", "newborn", "宝宝", "怀孕", "二胎", "新生儿"},
	{"grandma", "grandmother", "grandpa", "grandfather", "外婆", "奶奶", "姥姥", "外公", "爷爷", "姥爷"},
	{"school", "university", "college", "学校", "大学"},
	{"gpu", "gpus", "cuda", "显卡"},
	{"backbone", "主干", "骨干网络"},
	{"baseline", "基线", "基准"},
	{"validation", "eval", "evaluation", "evaluate", "验证", "评估", "评测"},
	{"dataset", "datasets", "数据集"},
	{"paper", "papers", "论文"},
	{"dorm", "dormitory", "宿舍", "寝室"},
	{"advisor", "adviser", "导师"},
	{"hypertension", "高血压", "血压", "降压"},
	{"diabetes", "diabetic", "glucose", "糖尿病", "血糖", "控糖"},
	{"hba1c", "a1c", "糖化", "糖化血红蛋白"},
	{"metformin", "二甲双胍"},
	{"insulin", "胰岛素"},
	{"amlodipine", "氨氯地平"},
	{"cholesterol", "statin", "胆固醇", "血脂", "他汀"},
	{"cataract", "白内障"},
	{"checkup", "体检", "复查", "复诊"},
	// Everyday errands, as people say them and as they are written down.
	{"delivery", "shipping", "courier", "parcel", "快递", "物流", "寄件", "发货", "包裹", "顺丰"},
	{"refund", "refunds", "refunded", "退款", "退钱", "退货", "退费"},
	{"compensation", "compensate", "赔付", "赔钱", "赔偿", "理赔"},
	{"reimburse", "reimbursement", "expense", "expenses", "报销"},
	{"invoice", "invoices", "receipt", "发票", "收据", "开票"},
	{"salary", "wage", "wages", "paycheck", "payroll", "payday", "income", "工资", "薪水", "薪资", "收入", "月薪", "年薪"},
	{"bonus", "奖金", "年终奖"},
	{"bills", "utilities", "账单", "缴费", "水电费", "电费", "水费", "燃气费", "物业费"},
	{"credit", "信用卡", "花呗", "白条", "分期"},
	{"挂号", "就诊", "门诊", "看病", "就医", "专家号"},
	{"vaccine", "vaccination", "疫苗", "接种"},
	{"vet", "veterinarian", "兽医", "宠物医院"},
	{"enroll", "enrollment", "admission", "学区", "幼升小", "小升初"},
	{"kindergarten", "preschool", "daycare", "幼儿园", "托班"},
	{"phone", "smartphone", "cellphone", "iphone", "android", "手机", "安卓"},
	{"ticket", "tickets", "车票", "机票", "火车票", "抢票", "订票", "买票", "改签", "退票"},
	{"hotel", "hostel", "airbnb", "酒店", "宾馆", "民宿", "住宿", "订房"},
	{"housewarming", "乔迁", "暖房", "搬新家"},
	{"boyfriend", "girlfriend", "男朋友", "女朋友", "男友", "女友"},
	{"岳母", "丈母娘", "岳父", "老丈人"},
	{"婆婆", "婆家", "公婆"},
	{"pto", "请假", "休假", "调休", "病假", "事假"},
	{"overtime", "加班"},
	{"layoff", "layoffs", "裁员", "被裁", "辞退", "开除"},
	{"contract", "contracts", "合同", "签约"},
	{"tv", "television", "screen", "screens", "tablet", "ipad", "youtube"},
	{"celiac", "coeliac", "gluten"},
	// Everyday spoken Chinese beside the words a note is written in
	// (扎针 for 针灸, 开刀 for 手术, 礼拜 for 星期).
	{"acupuncture", "针灸", "扎针"},
	{"tutoring", "tutor", "补课", "补习", "辅导", "家教"},
	{"injection", "injections", "打针", "注射", "输液", "吊水", "打点滴"},
	{"x-ray", "mri", "拍片", "片子", "核磁", "b超", "彩超"},
	{"礼拜", "星期", "每周"},
	{"关门", "歇业", "打烊", "不开门", "休息日"},
	{"borrow", "borrowed", "lend", "lent", "owe", "owes", "借钱", "借了", "欠钱", "欠款", "还钱", "还款"},
	{"涨", "涨价", "涨到", "上涨", "提价"},
	{"penalty", "罚款", "罚钱", "扣钱", "违约金", "逾期"},
	{"agreed", "agreement", "promised", "说好", "约定", "讲好", "商量好", "答应"},
	{"grandson", "granddaughter", "grandchild", "孙子", "孙女", "外孙", "外孙女"},
	{"hospitalized", "hospitalised", "住院", "出院"},
	{"摔跤", "摔倒", "跌倒", "滑倒", "摔了"},
	{"fracture", "fractured", "骨折", "骨裂"},
	{"headache", "头疼", "头痛"},
	{"stomachache", "肚子疼", "胃疼", "胃痛"},
	{"diarrhea", "diarrhoea", "拉肚子", "腹泻"},
	{"验血", "抽血", "化验"},
	{"cook", "cooking", "做饭", "煮饭", "烧饭", "下厨"},
	{"groceries", "grocery", "买菜", "菜市场", "超市"},
	{"repair", "repaired", "维修", "修好", "修理", "坏了"},
	// What a Chinese developer says in English and what is written in
	// Chinese, or the other way round.
	{"token", "tokens", "令牌"},
	{"cron", "crontab", "scheduler", "定时任务", "定时器", "计划任务"},
	{"webhook", "webhooks", "callback", "callbacks", "回调"},
	{"throttle", "throttling", "throttled", "ratelimit", "429", "限流", "限频", "限速"},
	{"encoding", "charset", "utf8", "gbk", "mojibake", "编码", "乱码", "字符集"},
	{"timeout", "timeouts", "超时"},
	{"log", "logs", "logging", "日志"},
	{"config", "configuration", "配置", "配置文件"},
	{"permission", "permissions", "权限", "鉴权", "授权"},
	{"login", "signin", "登录", "登陆"},
	{"backup", "backups", "备份"},
	{"migration", "migrate", "迁移"},
	{"queue", "kafka", "rabbitmq", "队列", "消息队列"},
	{"docker", "kubernetes", "k8s", "容器"},
}

// conceptIndex maps each member of a group (lowercased) to its groups;
// cjkMembers lists the Chinese members, which are found inside a run
// rather than as whole words (a run is often several words).
var conceptIndex, cjkMembers = func() (map[string][]int, []string) {
	idx := map[string][]int{}
	var cjk []string
	for i, g := range concepts {
		for _, w := range g {
			w = strings.ToLower(w)
			if len(idx[w]) == 0 && chars.HasCJK(w) {
				cjk = append(cjk, w)
			}
			idx[w] = append(idx[w], i)
		}
	}
	return idx, cjk
}()

// conceptSiblings returns the other members of the groups of word, or, for
// a Chinese run, of every member the run contains.
func conceptSiblings(word string) []string {
	word = strings.ToLower(word)
	var groups []int
	if chars.HasCJK(word) {
		for _, m := range cjkMembers {
			if strings.Contains(word, m) {
				groups = append(groups, conceptIndex[m]...)
			}
		}
	} else {
		groups = conceptIndex[word]
	}
	var out []string
	for _, g := range groups {
		for _, w := range concepts[g] {
			if w != word {
				out = append(out, w)
			}
		}
	}
	return out
}
