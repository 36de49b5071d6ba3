package textseg_test

import (
	"fmt"

	"github.com/engramhq/engram/internal/textseg"
)

func ExampleIndex() {
	fmt.Println(textseg.Index("我住在北京市朝阳区"))
	fmt.Println(textseg.Index("用Python写了个爬虫"))
	// Output:
	// 我住 住在 在北 北京 京市 市朝 朝阳 阳区 区
	// 用 Python 写了 了个 个爬 爬虫 虫
}

func ExampleMatch() {
	fmt.Println(textseg.Match("北京的天气怎么样"))
	fmt.Println(textseg.Match("what did I say about c++ AND NEAR(x)?"))
	fmt.Println(textseg.Match("北京市"))
	fmt.Printf("%q\n", textseg.Match("*?!"))
	// Output:
	// "北京" OR "天气"
	// "say" OR "c" OR "NEAR" OR "x"
	// "北京 京市" OR "北京" OR "京市"
	// ""
}

func ExampleTerms() {
	fmt.Printf("%q\n", textseg.Terms("Where is node.js installed? 用Python写了个爬虫"))
	// Output:
	// ["node js" "installed" "用" "python" "写" "个爬虫"]
}
