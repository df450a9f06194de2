#!/usr/bin/env bash
# make e2e-kind: the e2e suite against a kind cluster where gatehouse runs as
# deploy/default installs it (its image built here), next to a real cert-manager.
# See README.md in this directory. Needs Docker, kind, kubectl, Go and network.
#
#   KIND_CLUSTER=name   cluster name (default gatehouse-e2e)
#   KEEP_CLUSTER=1      keep the cluster after the run (default: deleted on exit)
set -euo pipefail

KIND_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$KIND_DIR/../.." && pwd -P)
# shellcheck source-path=SCRIPTDIR source=versions.env
source "$KIND_DIR/versions.env"

CLUSTER=${KIND_CLUSTER:-gatehouse-e2e}
IMAGE=gatehouse:e2e # the image e2e/kind/kustomization.yaml deploys

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'e2e/kind/run.sh: %s\n' "$*" >&2; exit 1; }

missing=()
for tool in docker kind kubectl go; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
((${#missing[@]} == 0)) || die "not installed: ${missing[*]} (make e2e-kind needs Docker, kind, kubectl and Go)"
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
	die "a kind cluster named $CLUSTER exists: kind delete cluster --name $CLUSTER, or set KIND_CLUSTER"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-e2e-kind.XXXXXX")
# kind writes the cluster's kubeconfig here, not into ~/.kube/config.
export KUBECONFIG="$work/kubeconfig"
created=""
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
	local rc=$?
	if ((rc != 0)) && [[ -n "$created" ]]; then
		log "failed (exit $rc); state of the cluster:"
		kubectl get pods -A -o wide >&2 || true
		kubectl -n gatehouse-system logs deployment/gatehouse --tail=50 >&2 || true
	fi
	if [[ -n "$created" && "${KEEP_CLUSTER:-0}" == 1 ]]; then
		log "kept cluster $CLUSTER: kind get kubeconfig --name $CLUSTER > kubeconfig; kind delete cluster --name $CLUSTER"
	elif [[ -n "$created" ]]; then
		kind delete cluster --name "$CLUSTER" || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

log "creating kind cluster $CLUSTER ($KIND_NODE_IMAGE)"
created=1
kind create cluster --name "$CLUSTER" --image "$KIND_NODE_IMAGE" --wait 3m

log "installing cert-manager $CERT_MANAGER_VERSION"
kubectl apply -f "https://github.com/cert-manager/cert-manager/releases/download/$CERT_MANAGER_VERSION/cert-manager.yaml"
kubectl -n cert-manager wait --for=condition=Available --timeout=5m \
	deployment/cert-manager deployment/cert-manager-cainjector deployment/cert-manager-webhook

log "building $IMAGE and loading it into the node"
docker build -t "$IMAGE" "$REPO_ROOT"
kind load docker-image "$IMAGE" --name "$CLUSTER"

# deploy/default (Issuers and Certificates included) with the image above. Right
# after it turns Available, cert-manager's own webhook may still lack its CA, so
# its validation of the Issuers can fail for a few seconds: retry.
log "installing gatehouse (deploy/default, image $IMAGE)"
for attempt in $(seq 1 12); do
	kubectl apply -k "$KIND_DIR" && break
	((attempt < 12)) || die "kubectl apply -k e2e/kind kept failing"
	sleep 5
done
kubectl -n gatehouse-system rollout status deployment/gatehouse --timeout=5m

log "waiting for cainjector to fill the webhook configurations' caBundle"
for config in validatingwebhookconfiguration mutatingwebhookconfiguration; do
	for attempt in $(seq 1 60); do
		[[ -n "$(kubectl get "$config" gatehouse -o jsonpath='{.webhooks[0].clientConfig.caBundle}')" ]] && break
		((attempt < 60)) || die "$config gatehouse: no caBundle after 2 minutes"
		sleep 2
	done
done

# component-overrides resolves against the operator namespace's workloads: the
# namespace must exist before its Role can be bound (deploy/overrides-rbac).
log "granting component-overrides read access to unbounded-system"
kubectl create namespace unbounded-system --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -k "$REPO_ROOT/deploy/overrides-rbac"

log "installing the test CRDs (e2e/testdata/crds) and helmetica's (deploy/helmetica-crds)"
kubectl apply -f "$REPO_ROOT/e2e/testdata/crds/"
kubectl wait --for=condition=Established --timeout=1m -f "$REPO_ROOT/e2e/testdata/crds/"
# A kustomize Component is applied through an overlay.
kubectl apply -k "$REPO_ROOT/e2e/testdata/helmetica-crds/install"
kubectl wait --for=condition=Established --timeout=1m crd/dependencygroups.helmetica.io crd/customresourcedefinitionsources.helmetica.io crd/operatorharnesses.helmetica.io

log "running the e2e suite against $CLUSTER"
cd "$REPO_ROOT/e2e"
E2E_KUBECONFIG="$KUBECONFIG" GOTOOLCHAIN=local GOWORK=off go test -count=1 -timeout 20m ./...
