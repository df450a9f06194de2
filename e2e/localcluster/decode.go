package localcluster

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// DecodeManifests decodes multi-document YAML, such as `gatehouse manifests`
// output.
func DecodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	return decodeAll(data)
}
