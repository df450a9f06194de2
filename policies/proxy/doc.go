// Package proxy implements contract PROXY (docs/contracts.md §4): routing a
// harnessed operator's pods through the harness proxy. Inject rewrites a Pod,
// in place on the decoded JSON map so that unknown fields survive, and
// Harnessed decides, from the OperatorHarness objects (as decoded JSON),
// whether a pod is harnessed. Both are pure.
//
// Files: config.go (server configuration), state.go (the view of harnesses
// and Admit, the decision on one pod), harnessed.go (which pods are
// harnessed), inject.go (the mutation and its one denial), volume.go (the
// injected volume, mount and env, and the kube-api-access cleanup),
// equal.go (comparing decoded JSON values), failopen.go (the warning on an
// OperatorHarness whose namespace would fail open), exempt.go (the denial
// of an OperatorHarness whose namespace is exempt from gatehouse's
// webhooks, where the proxy is never injected).
//
// Codes: ProxyVolumeNameTaken (deny), StateUnavailable (deny),
// ProxyNamespaceFailsOpen (warning, on OperatorHarness reviews),
// ProxyNamespaceExempt (deny, on OperatorHarness reviews).
//
// Decisions where the contract leaves room:
//
//   - Only init and regular containers are rewritten, as §4 says. Ephemeral
//     containers are never changed: the API server refuses them on Pod
//     CREATE, the only operation this contract runs on. Their volume mounts
//     still count as uses, so a volume one of them mounts is never removed.
//   - A mount is "at /var/run/secrets/kubernetes.io/serviceaccount" when its
//     mountPath, cleaned (path.Clean), is exactly that path. Mounts below it
//     (e.g. a subPath mount of .../token) are left alone.
//   - A volume left unmounted is removed only when its name starts with
//     "kube-api-access-" and it is a projected volume: the shape the
//     ServiceAccount admission plugin adds. A user's volume that was mounted
//     at the path stays (unmounted, which is valid).
//     Mounts in volumeMounts and volumeDevices of every container, including
//     ephemeral ones, count as uses.
//   - A pod that already declares a volume named proxy-api-access is denied
//     with ProxyVolumeNameTaken unless that volume is exactly the one Inject
//     would add (a re-run), and the pod is then left untouched: Inject never
//     produces an invalid pod (two volumes of one name) nor hijacks a user's
//     volume. Exactness is semantic JSON equality (numbers compared by value,
//     so float64, int64 and json.Number decodings agree); a pod injected
//     under a different Config (another CA ConfigMap) is therefore denied.
//   - In each container the first mount exactly equal to the injected one
//     ({name: proxy-api-access, mountPath: <path>, readOnly: true}) is kept
//     where it is and every other mount at the path is removed; without one,
//     it is appended. KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT
//     each keep the position of their first entry, which is replaced by
//     {name, value} (a valueFrom is dropped); later duplicates are removed;
//     a missing one is appended. This keeps Inject idempotent.
//   - KUBERNETES_SERVICE_PORT is Config.Port in decimal.
//   - Container entries that are not objects are skipped. A spec.volumes,
//     volumeMounts or env that is present but not a list is left alone (the
//     API server rejects such a pod when decoding it); a pod without a spec
//     object is not changed.
//   - Findings never carry an env value or any other value from the pod.
//   - Harnessed ignores spec.mode (§4: "in both modes"); a pod with an empty
//     serviceAccountName runs as "default"; an OperatorHarness without an
//     operator namespace harnesses nothing.
package proxy
