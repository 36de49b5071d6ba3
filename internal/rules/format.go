package rules

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/chars"
)

// maxShown bounds a string shown in an explanation: event data may hold a
// whole message.
const maxShown = 60

func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		x = chars.ClipHead(x, maxShown)
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case time.Duration:
		return x.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		b, err := json.Marshal(x)
		if err != nil || len(b) > 4*maxShown {
			return "{…}"
		}
		return string(b)
	}
	if f, ok := toFloat(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
