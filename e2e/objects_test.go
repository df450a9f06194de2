package e2e

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// prodController is the controller ownerReference to the HdfsCluster "prod",
// which makes a workload or Pod one that SA applies to.
func prodController() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: "hdfs.kubedoop.dev/v1alpha1", Kind: "HdfsCluster", Name: "prod",
		UID: "6b1f7c6e-0f1e-4d7a-9a57-2d8c2f0e7a11", Controller: ptr.To(true),
	}
}

// ownedStatefulSet is a StatefulSet that the HdfsCluster "prod" controls.
func ownedStatefulSet(ns, name, serviceAccount string) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{prodController()}},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: serviceAccount,
					Containers:         []corev1.Container{{Name: "main", Image: "registry.example/app:1"}},
				},
			},
		},
	}
}

func metadata(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
