// This file is the allowlist of a patch (upstream): what a strategic-merge
// patch of a component's Deployment or DaemonSet may set. It is fail-closed
// by path and open inside a permitted subtree (marked "open" below):
//
//   - metadata.labels, metadata.annotations (open; string values);
//   - spec.replicas and spec.strategy (open) on a Deployment,
//     spec.updateStrategy (open) on a DaemonSet, spec.minReadySeconds,
//     spec.revisionHistoryLimit;
//   - spec.template.metadata.labels, .annotations (open; string values);
//   - per container, in spec.template.spec.containers and .initContainers,
//     each with its name (the merge key): image, imagePullPolicy, args,
//     command, env, envFrom, resources, volumeMounts, securityContext,
//     livenessProbe, readinessProbe, startupProbe, lifecycle, ports (all
//     open), terminationMessagePath, terminationMessagePolicy, workingDir, and
//     restartPolicy on init containers only;
//   - in spec.template.spec: volumes, imagePullSecrets, nodeSelector (string
//     values), tolerations, affinity, topologySpreadConstraints, dnsConfig,
//     securityContext (all open), priorityClassName, dnsPolicy,
//     terminationGracePeriodSeconds, runtimeClassName, schedulerName.
//
// Each permitted field also has the YAML type Kubernetes requires (a
// mapping, a list, a single value), and each merged list the merge key its
// entries need (listKey).

package overrides

// shape is the YAML type a field must have.
type shape uint8

const (
	shapeAny shape = iota
	shapeScalar
	shapeMap
	shapeList
)

func (s shape) String() string {
	switch s {
	case shapeScalar:
		return "a single value"
	case shapeMap:
		return "a mapping"
	case shapeList:
		return "a list"
	}
	return "any value"
}

// listKey is the field that identifies an entry of a merged list.
type listKey struct {
	field string
	// number is set when the key is a number (containerPort), not a string.
	number bool
}

// rule is what a patch may hold at one path.
type rule struct {
	shape shape
	// fields are the permitted fields of a mapping; a field not in it is not
	// permitted.
	fields map[string]*rule
	// open marks a permitted subtree: anything below is permitted, except what
	// protected.go rejects everywhere.
	open bool
	// strings marks a mapping whose values must be strings (labels,
	// annotations, nodeSelector); reserved marks those whose keys must not
	// use the reserved prefix (labels and annotations).
	strings, reserved bool
	// items is the rule of each entry of a list whose entries have
	// enumerated fields (containers); otherwise entries are open.
	items *rule
	// itemShape is the shape of each entry of a list.
	itemShape shape
	// key is the merge key of the entries of a list, if any.
	key listKey
	// kinds are the workload kinds that have the field; 0 means both.
	kinds workloadKind
	// hints explain why some fields are not permitted here.
	hints map[string]string
	// protected are the fields of this mapping that are always rejected,
	// with the reason (protected.go).
	protected map[string]string
}

var (
	keyName          = listKey{field: "name"}
	keyMountPath     = listKey{field: "mountPath"}
	keyContainerPort = listKey{field: "containerPort", number: true}
	keyTopologyKey   = listKey{field: "topologyKey"}
)

func object(fields map[string]*rule) *rule { return &rule{shape: shapeMap, fields: fields} }
func scalar() *rule                        { return &rule{shape: shapeScalar} }
func openMap() *rule                       { return &rule{shape: shapeMap, open: true} }
func stringMap(reserved bool) *rule {
	return &rule{shape: shapeMap, open: true, strings: true, reserved: reserved}
}
func openList(itemShape shape, key listKey) *rule {
	return &rule{shape: shapeList, open: true, itemShape: itemShape, key: key}
}
func (r *rule) only(kinds workloadKind) *rule { r.kinds = kinds; return r }

// protecting marks fields of r as always rejected.
func (r *rule) protecting(fields map[string]string) *rule { r.protected = fields; return r }

// metadataRule is the metadata of the workload and of its pod template.
func metadataRule() *rule {
	return object(map[string]*rule{
		"labels":      stringMap(true),
		"annotations": stringMap(true),
	})
}

// containerRule is one container; init selects an init container.
func containerRule(init bool) *rule {
	fields := map[string]*rule{
		"name":                     scalar(),
		"image":                    scalar(),
		"imagePullPolicy":          scalar(),
		"args":                     openList(shapeScalar, listKey{}),
		"command":                  openList(shapeScalar, listKey{}),
		"env":                      openList(shapeMap, keyName),
		"envFrom":                  openList(shapeMap, listKey{}),
		"resources":                openMap(),
		"volumeMounts":             openList(shapeMap, keyMountPath),
		"securityContext":          openMap(),
		"livenessProbe":            openMap(),
		"readinessProbe":           openMap(),
		"startupProbe":             openMap(),
		"lifecycle":                openMap(),
		"ports":                    openList(shapeMap, keyContainerPort),
		"terminationMessagePath":   scalar(),
		"terminationMessagePolicy": scalar(),
		"workingDir":               scalar(),
	}
	if init {
		// On an init container, restartPolicy: Always declares a native
		// sidecar; Kubernetes rejects it on an ordinary container.
		fields["restartPolicy"] = scalar()
		return object(fields)
	}
	r := object(fields)
	r.hints = map[string]string{"restartPolicy": hintRestartPolicy}
	return r
}

const hintRestartPolicy = "restartPolicy is permitted on initContainers only, where it declares a native sidecar"

func containersRule(init bool) *rule {
	return &rule{shape: shapeList, items: containerRule(init), itemShape: shapeMap, key: keyName}
}

// patchRule is the root of the allowlist: the whole workload object.
var patchRule = object(map[string]*rule{
	"metadata": metadataRule().protecting(protectedWorkloadMetadata),
	"spec": object(map[string]*rule{
		"replicas":             scalar().only(deployment),
		"strategy":             openMap().only(deployment),
		"updateStrategy":       openMap().only(daemonSet),
		"minReadySeconds":      scalar(),
		"revisionHistoryLimit": scalar(),
		"template": object(map[string]*rule{
			"metadata": metadataRule(),
			"spec": object(map[string]*rule{
				"containers":                    containersRule(false),
				"initContainers":                containersRule(true),
				"volumes":                       openList(shapeMap, keyName),
				"imagePullSecrets":              openList(shapeMap, keyName),
				"nodeSelector":                  stringMap(false),
				"tolerations":                   openList(shapeMap, listKey{}),
				"affinity":                      openMap(),
				"topologySpreadConstraints":     openList(shapeMap, keyTopologyKey),
				"priorityClassName":             scalar(),
				"dnsPolicy":                     scalar(),
				"dnsConfig":                     openMap(),
				"terminationGracePeriodSeconds": scalar(),
				"runtimeClassName":              scalar(),
				"schedulerName":                 scalar(),
				"securityContext":               openMap(),
			}).protecting(protectedPodSpec),
		}),
	}).protecting(protectedWorkloadSpec),
}).protecting(protectedWorkload)
