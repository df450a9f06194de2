package overrides

import "testing"

// sitesPatch is one entry of component and kind for sites (flow YAML, ""
// for none) with the flow-style patch.
func sitesPatch(component, kind, sites, patch string) map[string]string {
	s := ""
	if sites != "" {
		s = "\n  sites: " + sites
	}
	return one(apiLine + "overrides:\n- component: " + component + "\n  kind: " + kind + s + "\n  patch: " + patch + "\n")
}

// TestResolvePerSite: an entry with sites is checked against the workload
// of each of those Sites, one by one; an entry without against every Site's
// workload, one by one; never against a merge of them.
func TestResolvePerSite(t *testing.T) {
	cache := "{spec: {template: {spec: {containers: [{name: cache, resources: {limits: {memory: 1Gi}}}]}}}}"
	siteLabel := func(value string) string { return "{spec: {template: {metadata: {labels: {site: " + value + "}}}}}" }
	runCases(t, []validateCase{
		{name: "a container one Site has, patched there", data: sitesPatch("storage", kindDaemonSet, "[edge-east]", cache)},
		{name: "a container one Site has, patched in another", data: sitesPatch("storage", kindDaemonSet, "[edge-west]", cache),
			want: []result{deny(OverrideContainerUnknown, c0+".name")}},
		{name: "a container one Site has, patched in every Site", data: sitesPatch("storage", kindDaemonSet, "", cache),
			want: []result{deny(OverrideContainerUnknown, c0+".name")}},
		{name: "a Site's own selector value restated", data: sitesPatch("metalman", kindDeployment, "[edge-east]", siteLabel("edge-east"))},
		{name: "another Site's selector value", data: sitesPatch("metalman", kindDeployment, "[edge-west]", siteLabel("edge-east")),
			want: []result{deny(OverrideSelectorLabel, p0+".spec.template.metadata.labels[site]")}},
		{name: "another Site's selector value, listed second", data: sitesPatch("metalman", kindDeployment, "[edge-east, edge-west]",
			siteLabel("edge-east")),
			want: []result{deny(OverrideSelectorLabel, p0+".spec.template.metadata.labels[site]")}},
		{name: "one Site's selector value in every Site", data: sitesPatch("metalman", kindDeployment, "", siteLabel("edge-east")),
			want: []result{deny(OverrideSelectorLabel, p0+".spec.template.metadata.labels[site]")}},
		{name: "a Site without a workload", data: sitesPatch("storage", kindDaemonSet, "[edge-north]", cache),
			want: []result{warn(OverrideResolutionSkipped, e0)}},
		{name: "a Site without a workload beside one with", data: sitesPatch("storage", kindDaemonSet, "[edge-north, edge-west]", cache),
			want: []result{warn(OverrideResolutionSkipped, e0), deny(OverrideContainerUnknown, c0+".name")}},

		{name: "node selector the operator sets, restated", data: sitesPatch("storage", kindDaemonSet, "[edge-west]",
			"{spec: {template: {spec: {nodeSelector: {unbounded-cloud.io/site: edge-west, disk: ssd}}}}}")},
		{name: "node selector the operator sets, changed", data: sitesPatch("net", kindDaemonSet, "",
			"{spec: {template: {spec: {nodeSelector: {kubernetes.io/os: windows}}}}}"),
			want: []result{deny(OverrideNodeSelectorOwned, ps0+".nodeSelector[kubernetes.io/os]")}},
		{name: "node selector of one Site in every Site", data: sitesPatch("storage", kindDaemonSet, "",
			"{spec: {template: {spec: {nodeSelector: {unbounded-cloud.io/site: edge-west}}}}}"),
			want: []result{deny(OverrideNodeSelectorOwned, ps0+".nodeSelector[unbounded-cloud.io/site]")}},

		{name: "operator mount, same volume", data: runFields("volumeMounts: [{name: data, mountPath: /var/lib/storage, readOnly: true}]")},
		{name: "operator mount repointed", data: runFields("volumeMounts: [{name: scratch, mountPath: /var/lib/storage}]"),
			want: []result{deny(OverrideVolumeRedefined, c0+".volumeMounts[0]")}},
		{name: "new mount", data: runFields("volumeMounts: [{name: scratch, mountPath: /scratch}]")},
	})
}
