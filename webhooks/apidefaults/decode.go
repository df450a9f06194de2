// Package apidefaults reproduces what the Kubernetes API server does to a
// built-in object before admission webhooks see it, so that `gatehouse
// check` judges the object the server would judge:
//
//   - Decode: the object is decoded into its Go type (k8s.io/api),
//     case-sensitively, as the server's JSON decoder does. An object that does
//     not decode (spec.containers given as a string) never reaches admission
//     on a real server; here it is an error naming the field path.
//   - Default: the server's defaulting functions (pkg/apis/<group>/v1
//     SetDefaults_* and the declarative +default markers of k8s.io/api) as of
//     Kubernetes 1.36, and the effects of the v1 -> internal -> v1
//     conversion round trip (a Pod's deprecated serviceAccount copied into
//     serviceAccountName and back, init-container annotations dropped, ...).
//
// The defaults are restated here rather than imported: k8s.io/kubernetes is
// too heavy a dependency for the product module. The e2e suite proves them
// equal to a real API server's for every built-in object of the golden
// corpus and deploy/examples (e2e/apidefaults_test.go; docs/design.md,
// "What check does before admission").
package apidefaults

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kjson "sigs.k8s.io/json"
)

// DecodeError says that an object of a built-in kind does not decode into
// its Go type. It names the field path and the JSON type found, never a
// value from the object.
type DecodeError struct {
	Kind string
	// Field is the JSON path of the field that does not decode ("spec.containers"),
	// when the decoder names it.
	Field string
	// Found is the JSON type found there ("string"), and Want the Go type
	// the API expects ("[]v1.Container"), when the decoder names them.
	Found, Want string
	// Strict lists fields the Go type does not have or that are given twice
	// (strict decoding only), as the decoder words them: `unknown field
	// "spec.foo"`.
	Strict []string
}

func (e *DecodeError) Error() string {
	switch {
	case len(e.Strict) > 0:
		return fmt.Sprintf("not a valid %s: %s (the API server rejects this when kubectl validates strictly, its default)",
			e.Kind, strings.Join(e.Strict, ", "))
	case e.Field != "":
		return fmt.Sprintf("not a valid %s: %s is %s %s where the API expects %s", e.Kind, e.Field, article(e.Found), e.Found, e.Want)
	default:
		return fmt.Sprintf("not a valid %s: a field does not decode into its Go type", e.Kind)
	}
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// typeError parses the decoder's type error, "json: cannot unmarshal <json
// type>[ <value>] into Go struct field <Struct>.<path> of type <Go type>",
// keeping the JSON type, the path and the Go type and dropping the value
// (the decoder quotes numbers).
var typeError = regexp.MustCompile(`^json: cannot unmarshal (\w+)(?: \S+)? into Go struct field [^.\s]+\.(\S+) of type (\S+)$`)

// IsBuiltin reports whether gvk is a kind the API server itself serves (as
// opposed to a custom resource), one that Decode decodes.
func IsBuiltin(gvk schema.GroupVersionKind) bool {
	return clientgoscheme.Scheme.Recognizes(gvk)
}

// Decode decodes raw, the JSON of an object of kind gvk, into its Go type,
// as the API server's decoder does: case-sensitively, fields the type does
// not know dropped. It returns nil and no error when gvk is not a built-in
// kind. The error is a *DecodeError.
func Decode(gvk schema.GroupVersionKind, raw []byte) (runtime.Object, error) {
	obj, err := newObject(gvk)
	if obj == nil || err != nil {
		return nil, err
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
		return nil, decodeError(gvk.Kind, err)
	}
	return obj, nil
}

// DecodeStrict is Decode that also rejects fields the Go type does not know
// and fields given twice, as the API server does for kubectl's default
// (fieldValidation=Strict).
func DecodeStrict(gvk schema.GroupVersionKind, raw []byte) (runtime.Object, error) {
	obj, err := newObject(gvk)
	if obj == nil || err != nil {
		return nil, err
	}
	strict, err := kjson.UnmarshalStrict(raw, obj)
	if err != nil {
		return nil, decodeError(gvk.Kind, err)
	}
	if len(strict) > 0 {
		e := &DecodeError{Kind: gvk.Kind}
		for _, s := range strict {
			e.Strict = append(e.Strict, s.Error())
		}
		return nil, e
	}
	return obj, nil
}

func newObject(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if !IsBuiltin(gvk) {
		return nil, nil
	}
	obj, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		return nil, nil //nolint:nilerr // a version the scheme does not register is not a built-in kind's
	}
	return obj, nil
}

func decodeError(kind string, err error) *DecodeError {
	e := &DecodeError{Kind: kind}
	if m := typeError.FindStringSubmatch(err.Error()); m != nil {
		e.Found, e.Field, e.Want = m[1], m[2], m[3]
	}
	return e
}
