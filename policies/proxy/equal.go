// Comparing decoded JSON values.
//
// Reads: any decoded JSON value. Allows: anything; numbers of every Go
// numeric type and json.Number compare by value.

package proxy

import (
	"encoding/json"
	"math/big"
)

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !jsonEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case nil:
		return b == nil
	}
	x, ok := number(a)
	if !ok {
		return false
	}
	y, ok := number(b)
	return ok && x.Cmp(y) == 0
}

// number returns a numeric JSON value exactly.
func number(v any) (*big.Float, bool) {
	f := new(big.Float)
	switch n := v.(type) {
	case float64:
		if n != n { // NaN never comes out of JSON.
			return nil, false
		}
		return f.SetFloat64(n), true
	case float32:
		return number(float64(n))
	case int:
		return f.SetInt64(int64(n)), true
	case int32:
		return f.SetInt64(int64(n)), true
	case int64:
		return f.SetInt64(n), true
	case uint32:
		return f.SetUint64(uint64(n)), true
	case uint64:
		return f.SetUint64(n), true
	case json.Number:
		if _, ok := f.SetString(string(n)); ok {
			return f, true
		}
	}
	return nil, false
}
