package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// DefaultPageSize is the most objects asked for per list call.
const DefaultPageSize = 500

// PageBytes is about how many bytes of objects one list call asks for: the
// limit of a page is PageBytes over the mean size of the objects of the
// page before (at most the page size). A namespace of 1 MiB objects is then
// listed a few objects at a time, so the API server never assembles a page
// of hundreds of megabytes for the audit either.
const PageBytes = 4 << 20

// firstPageSize is the limit of a resource's first page, before the size of
// its objects is known.
const firstPageSize = 16

// Pager lists objects page by page (limit/continue) and decodes each page
// as it streams in, one object at a time: the audit holds one listed object
// at once, however large the objects and however many a page holds, so its
// memory is bounded in bytes (the largest object the API server stores),
// not in objects. Only list (get on the collection) is used.
type Pager struct {
	client rest.Interface
	// PageSize is the most objects per list call (DefaultPageSize when 0).
	PageSize int64
}

// NewPager returns a pager over rc, which sets the rate limit (QPS and
// Burst) of its list calls.
func NewPager(rc *rest.Config) (*Pager, error) {
	cfg := dynamic.ConfigFor(rc)
	cfg.AcceptContentTypes = "application/json" // decoded as a JSON stream below, never CBOR
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &Pager{client: client}, nil
}

// List names what to list: a resource, in a namespace or all, narrowed by
// selectors.
type List struct {
	GVR schema.GroupVersionResource
	// Kind fills in the kind of items the API server lists without one
	// (a built-in list names the kind once, for all its items).
	Kind          string
	Namespace     string
	FieldSelector string
	LabelSelector string
}

// ListError is an error of the API server's list call itself, as opposed to
// an error of the visit function: only a ListError says that the client may
// not list (Forbidden) or that the resource is gone (NotFound).
type ListError struct {
	GVR schema.GroupVersionResource
	// FirstPage is set when the very first list call failed: nothing of the
	// resource was listed.
	FirstPage bool
	Err       error
}

func (e *ListError) Error() string {
	if apierrors.IsResourceExpired(e.Err) {
		return fmt.Sprintf("listing %s: the list expired between two pages (%v); a higher qps finishes sooner", e.GVR.GroupResource(), e.Err)
	}
	return fmt.Sprintf("listing %s: %v", e.GVR.GroupResource(), e.Err)
}

func (e *ListError) Unwrap() error { return e.Err }

// Each lists l page by page and hands visit each object, in list order, as
// it is decoded; the object is the caller's, and dropped by the pager. A
// list call that fails returns a *ListError; an error of visit is returned
// as it is and ends the list.
func (p *Pager) Each(ctx context.Context, l List, visit func(*unstructured.Unstructured) error) error {
	maxPage := p.PageSize
	if maxPage <= 0 {
		maxPage = DefaultPageSize
	}
	limit := min(maxPage, firstPageSize)
	cont := ""
	for {
		page, err := p.page(ctx, l, limit, cont, visit)
		if err != nil {
			return err
		}
		if page.items > 0 {
			limit = max(1, min(maxPage, PageBytes/max(1, page.bytes/page.items)))
		}
		if cont = page.cont; cont == "" {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

type pageRead struct {
	cont         string
	items, bytes int64
}

// page runs one list call and decodes its response as a stream.
func (p *Pager) page(ctx context.Context, l List, limit int64, cont string, visit func(*unstructured.Unstructured) error) (pageRead, error) {
	req := p.client.Get().AbsPath(collectionPath(l.GVR, l.Namespace)...).Param("limit", strconv.FormatInt(limit, 10))
	if cont != "" {
		req = req.Param("continue", cont)
	}
	if l.FieldSelector != "" {
		req = req.Param("fieldSelector", l.FieldSelector)
	}
	if l.LabelSelector != "" {
		req = req.Param("labelSelector", l.LabelSelector)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return pageRead{}, &ListError{GVR: l.GVR, FirstPage: cont == "", Err: err}
	}
	defer body.Close()
	read, visitErr, err := decodeList(body, l, visit)
	if visitErr != nil {
		return read, visitErr
	}
	if err != nil {
		return read, &ListError{GVR: l.GVR, FirstPage: cont == "", Err: err}
	}
	return read, nil
}

// collectionPath is the URL path of a resource's collection.
func collectionPath(gvr schema.GroupVersionResource, namespace string) []string {
	path := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		path = []string{"/api", gvr.Version}
	}
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	return append(path, gvr.Resource)
}

// decodeList reads a list response ({"metadata": {"continue": ...},
// "items": [...], ...}, in any key order) one token at a time, decoding
// and visiting each item before reading the next. visitErr is visit's error;
// err is the stream's.
func decodeList(r io.Reader, l List, visit func(*unstructured.Unstructured) error) (read pageRead, visitErr, err error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return read, nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return read, nil, err
		}
		switch key, _ := tok.(string); key {
		case "metadata":
			var meta struct {
				Continue string `json:"continue"`
			}
			if err := dec.Decode(&meta); err != nil {
				return read, nil, err
			}
			read.cont = meta.Continue
		case "items":
			if err := expectDelim(dec, '['); err != nil {
				return read, nil, err
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return read, nil, err
				}
				read.items++
				read.bytes += int64(len(raw))
				obj := &unstructured.Unstructured{}
				// Numbers as the API machinery reads them (int64 where whole).
				if err := utiljson.Unmarshal(raw, &obj.Object); err != nil {
					return read, nil, err
				}
				raw = nil
				if obj.GetKind() == "" {
					obj.SetKind(l.Kind)
				}
				if obj.GetAPIVersion() == "" {
					obj.SetAPIVersion(l.GVR.GroupVersion().String())
				}
				if err := visit(obj); err != nil {
					return read, err, nil
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return read, nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return read, nil, err
			}
		}
	}
	return read, nil, expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return errors.New("the list response is not a JSON list object")
	}
	return nil
}
