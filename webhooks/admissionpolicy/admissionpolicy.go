// Package admissionpolicy evaluates ValidatingAdmissionPolicies offline
// with the API server's own admission plugin
// (k8s.io/apiserver/pkg/admission/plugin/policy/validating): the same
// compilation, CEL environment and libraries, matching of rules, bindings,
// namespace selectors and matchConditions, and the same denial it returns
// to a client. The tests of the policies gatehouse renders
// (gatehouse-managed-labels, webhooks/render) run them through it. No
// binary links it (e2e's TestServerBuildLeavesOutThePolicyPlugin): the
// in-process layout proves allows in matchConditions, with cel-go alone
// (docs/in-process.md).
//
// The plugin is built as the API server builds it, from an informer factory
// and clients; here they are in-memory fakes holding only the policies and
// bindings, and namespaces are answered from the caller's view of them.
package admissionpolicy

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	admissionregistrationclient "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	fakeadmissionregistration "k8s.io/client-go/kubernetes/typed/admissionregistration/v1/fake"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"
	fakecore "k8s.io/client-go/kubernetes/typed/core/v1/fake"
	listersv1 "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
)

// Request is one admission request as the policies see it.
type Request struct {
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	SubResource string
	Namespace   string
	Name        string
	Operation   admission.Operation
	// Object and OldObject are JSON objects (nil when absent).
	Object, OldObject []byte
	Username          string
}

// Namespaces answers the labels of a namespace; ok is false when it is not
// known (it is then taken to exist with only the kubernetes.io/metadata.name
// label, which the API server sets on every namespace).
type Namespaces func(name string) (labels map[string]string, ok bool)

// Validator runs a fixed set of ValidatingAdmissionPolicies and bindings.
type Validator struct {
	plugin *validating.Plugin
	stop   chan struct{}
}

// NewValidator compiles the policies and bindings in the API server's
// admission plugin. Close releases it.
func NewValidator(policies []admissionregistrationv1.ValidatingAdmissionPolicy, bindings []admissionregistrationv1.ValidatingAdmissionPolicyBinding, namespaces Namespaces) (*Validator, error) {
	var objects []runtime.Object
	for i := range policies {
		objects = append(objects, policies[i].DeepCopy())
	}
	for i := range bindings {
		objects = append(objects, bindings[i].DeepCopy())
	}
	client, err := newPolicyClient(objects)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	plugin, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	plugin.SetExternalKubeInformerFactory(factory)
	plugin.SetExternalKubeClientSet(client)
	plugin.SetRESTMapper(meta.NewDefaultRESTMapper(nil))
	plugin.SetDynamicClient(fake.NewSimpleDynamicClient(runtime.NewScheme()))
	plugin.SetDrainedNotification(stop)
	plugin.SetAuthorizer(authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionAllow, "", nil
	}))
	plugin.SetMatcher(matching.NewMatcher(namespaceLister{namespaces}, client))
	if err := plugin.ValidateInitialization(); err != nil {
		close(stop)
		return nil, err
	}
	// The plugin is ready when the namespace informer it asks for has
	// synced too, though namespaces are answered by namespaceLister.
	factory.Core().V1().Namespaces().Informer()
	factory.Start(stop)
	v := &Validator{plugin: plugin, stop: stop}
	if !plugin.WaitForReady() {
		v.Close()
		return nil, errors.New("the admission policies did not load")
	}
	return v, nil
}

// Close stops the plugin's informers.
func (v *Validator) Close() {
	if v != nil && v.stop != nil {
		close(v.stop)
		v.stop = nil
	}
}

// Validate admits r through the policies: nil when they allow it, else the
// API server's own error (a *apierrors.StatusError for a denial).
func (v *Validator) Validate(ctx context.Context, r Request) error {
	object, err := decode(r.Object)
	if err != nil {
		return err
	}
	oldObject, err := decode(r.OldObject)
	if err != nil {
		return err
	}
	attrs := admission.NewAttributesRecord(object, oldObject, r.Kind, r.Namespace, r.Name, r.Resource, r.SubResource,
		r.Operation, nil, false, &user.DefaultInfo{Name: r.Username})
	return v.plugin.Validate(ctx, attrs, objectInterfaces)
}

// Denial returns the status of a denial by a policy, or nil.
func Denial(err error) *metav1.Status {
	var status *apierrors.StatusError
	if errors.As(err, &status) {
		s := status.Status()
		return &s
	}
	return nil
}

func decode(raw []byte) (runtime.Object, error) {
	if raw == nil {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decoding the object: %w", err)
	}
	return u, nil
}

var objectInterfaces = admission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// namespaceLister answers the policies' namespace selectors.
type namespaceLister struct{ labels Namespaces }

func (l namespaceLister) Get(name string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelMetadataName: name}}}
	if l.labels != nil {
		if known, ok := l.labels(name); ok {
			for k, v := range known {
				ns.Labels[k] = v
			}
		}
	}
	return ns, nil
}

func (l namespaceLister) List(labels.Selector) ([]*corev1.Namespace, error) {
	return nil, errors.New("listing namespaces is not supported offline")
}

var _ listersv1.NamespaceLister = namespaceLister{}

// policyClient is the clientset the plugin and its informers read: the two
// API groups they use, served from memory. Every other group is nil (the
// embedded Interface) and would panic if called; client-go's full fake
// clientset would serve them all, at about 20 MB of gatehouse's binary.
type policyClient struct {
	kubernetes.Interface
	fake *clienttesting.Fake
}

func newPolicyClient(objects []runtime.Object) (*policyClient, error) {
	scheme := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	for _, obj := range objects {
		if err := tracker.Add(obj); err != nil {
			return nil, err
		}
	}
	fake := &clienttesting.Fake{}
	fake.AddReactor("*", "*", clienttesting.ObjectReaction(tracker))
	fake.AddWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := tracker.Watch(action.GetResource(), action.GetNamespace(), opts)
		return err == nil, w, err
	})
	return &policyClient{fake: fake}, nil
}

// IsWatchListSemanticsUnSupported tells the informers' reflectors to list
// and then watch, as they do with client-go's fake clientset: the in-memory
// tracker does not stream a list through a watch.
func (c *policyClient) IsWatchListSemanticsUnSupported() bool { return true }

func (c *policyClient) AdmissionregistrationV1() admissionregistrationclient.AdmissionregistrationV1Interface {
	return &fakeadmissionregistration.FakeAdmissionregistrationV1{Fake: c.fake}
}

func (c *policyClient) CoreV1() coreclient.CoreV1Interface {
	return &fakecore.FakeCoreV1{Fake: c.fake}
}
