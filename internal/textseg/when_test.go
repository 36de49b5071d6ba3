package textseg

import "testing"

func TestAsksWhen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"When did Melanie go camping?", true},
		{"How long has Nate had his turtles?", true},
		{"what year did you move here", true},
		{"I was thinking. When is the dentist?", true},
		{"我上次什么时候去的医院", true},
		{"上次回宜昌那趟车是几点走的", true},  // as "what time" is in English
		{"你给我的那几点建议再说一遍", false}, // a few points, not the hour
		{"那个会是哪天开的", true},
		{"那个证啥时候考来着", true}, // as people type it
		{"他上回说的啥时候还来着", true},
		{"你记得是哪个月交的吗", true},
		{"What did Melanie feel when she saw the meteor shower?", false},
		{"What activities does Melanie do?", false},
		{"我喜欢喝什么咖啡", false},
	} {
		if got := Understand(tc.q).AsksWhen; got != tc.want {
			t.Errorf("Understand(%q).AsksWhen = %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestMentionsTime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"We went camping two weekends ago!", true},
		{"I've had them since 2019.", true},
		{"Yesterday I went to a fair.", true},
		{"上周我们去爬山了", true},
		{"It was a great day at the beach.", false},
		{"You may like this painting, it's 20x30.", false},
		{"我们去爬山了", false},
		{"考试是11月28号 理论加实操", true},
		{"婚期定在 2027 年 5 月 20 日", true},
		{"说年底再还", true},
		{"明早 8 点出发", true},
		{"周三下班后去拿", true},
		{"总结了 3 点原因", false}, // points, not the hour
		{"还欠2.5万", false},
	} {
		if got := MentionsTime(tc.text); got != tc.want {
			t.Errorf("MentionsTime(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestAsksMany(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"What activities does Melanie partake in?", true},
		{"Which two fantasy novels does Tim enjoy?", true},
		{"How many times has she gone to the beach?", true},
		{"In what ways is Caroline helping?", true},
		{"What kinds of pottery have they made?", true},
		{"What is Caroline's identity?", false},
		{"What does Jon tell Gina?", false},
		{"Which class was it?", false},
		{"What did Melanie paint recently?", false},
	} {
		if got := Understand(tc.q).AsksMany; got != tc.want {
			t.Errorf("Understand(%q).AsksMany = %v, want %v", tc.q, got, tc.want)
		}
	}
}
