package adapters

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// configInvalid renders the errors of a configuration's check (errs, their
// paths relative to the configuration what names) as the one error every
// review is then answered with, or nil when there are none: one line, the
// errors separated by "; " since their own texts hold commas.
func configInvalid(what string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%s: %s", what, strings.Join(msgs, "; "))
}
