package tokens

// estimates are the presets For and the exact counters' fallback use. Each
// was fitted by TestCalibrate to its family's tokenizer on testdata/calib.txt
// (go test ./internal/tokens -run TestCalibrate -calibrate -v prints them);
// doc.go gives each one's error on the held-out corpus. glm has no
// tokenizer to fit to here and borrows qwen's weights: both are byte-level
// BPEs of about 150,000 tokens trained with much Chinese.
var estimates = map[string]Estimate{
	"generic":     {Family: "generic", Han: 1209, KanaHangul: 1177, CJKPunct: 767, Word: [4]int{867, 956, 1392, 1192}, NonASCII: 390, DigitGroup: 818, Digit: 617, SpaceDigit: 633, PunctRun: 596, PunctChar: 161, SpaceRun: 376, LineBreak: 1108, Symbol: 675, Astral: 3042},
	"o200k_base":  {Family: "o200k_base", Han: 828, KanaHangul: 769, CJKPunct: 266, Word: [4]int{865, 944, 1135, 1055}, NonASCII: 117, DigitGroup: 1900, Digit: 0, SpaceDigit: 642, PunctRun: 574, PunctChar: 152, SpaceRun: 461, LineBreak: 1158, Symbol: 626, Astral: 2075},
	"cl100k_base": {Family: "cl100k_base", Han: 1248, KanaHangul: 1127, CJKPunct: 584, Word: [4]int{998, 973, 1214, 1201}, NonASCII: 360, DigitGroup: 1862, Digit: 25, SpaceDigit: 633, PunctRun: 402, PunctChar: 193, SpaceRun: 536, LineBreak: 923, Symbol: 627, Astral: 2889},
	"claude":      {Family: "claude", Han: 1113, KanaHangul: 1110, CJKPunct: 570, Word: [4]int{938, 920, 1280, 1139}, NonASCII: 389, DigitGroup: 1480, Digit: 0, SpaceDigit: 113, PunctRun: 793, PunctChar: 117, SpaceRun: 132, LineBreak: 1285, Symbol: 738, Astral: 3099},
	"qwen":        {Family: "qwen", Han: 733, KanaHangul: 777, CJKPunct: 100, Word: [4]int{1125, 883, 1180, 1174}, NonASCII: 189, DigitGroup: 2426, Digit: 241, SpaceDigit: 546, PunctRun: 610, PunctChar: 119, SpaceRun: 179, LineBreak: 1324, Symbol: 651, Astral: 1945},
	"deepseek":    {Family: "deepseek", Han: 690, KanaHangul: 850, CJKPunct: 100, Word: [4]int{894, 882, 1388, 1160}, NonASCII: 155, DigitGroup: 1818, Digit: 0, SpaceDigit: 898, PunctRun: 611, PunctChar: 184, SpaceRun: 599, LineBreak: 936, Symbol: 560, Astral: 2380},
	"llama":       {Family: "llama", Han: 895, KanaHangul: 781, CJKPunct: 100, Word: [4]int{1135, 919, 1100, 1162}, NonASCII: 176, DigitGroup: 2129, Digit: 0, SpaceDigit: 0, PunctRun: 626, PunctChar: 100, SpaceRun: 326, LineBreak: 1246, Symbol: 612, Astral: 2935},
	"glm":         {Family: "glm", Han: 733, KanaHangul: 777, CJKPunct: 100, Word: [4]int{1125, 883, 1180, 1174}, NonASCII: 189, DigitGroup: 2426, Digit: 241, SpaceDigit: 546, PunctRun: 610, PunctChar: 119, SpaceRun: 179, LineBreak: 1324, Symbol: 651, Astral: 1945},
}
