#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubemark (the hollow
# node) and etcd from the module sources pinned in tools/controlplane/go.mod, for the
# e2e suite (controller-runtime envtest) and `make run`. No Docker, no prebuilt
# downloads.
#
# usage: tools/controlplane/build.sh [CACHE_DIR]     (default CACHE_DIR: <repo root>/.cache/e2e)
#
# Output: $CACHE_DIR/bin/<BIN_DIR_NAME from versions.env>/{kube-apiserver,kube-controller-manager,
# kube-scheduler,kubemark,etcd}.
# A binary already present there is not rebuilt. Progress goes to stderr; the only
# line on stdout is the binary directory, printed last, so both
#   dir=$(tools/controlplane/build.sh)   and   dir=$(tools/controlplane/build.sh | tail -1)
# work while CI logs still show the progress and heartbeat lines.
set -euo pipefail

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$TOOLS_DIR/../.." && pwd -P)

# shellcheck source=versions.env
source "$TOOLS_DIR/versions.env"

CACHE_DIR=${1:-$REPO_ROOT/.cache/e2e}
mkdir -p "$CACHE_DIR"
CACHE_DIR=$(cd "$CACHE_DIR" && pwd -P)

log() { printf '%s\n' "$*" >&2; }
die() { log "build.sh: $*"; exit 1; }

want_dir_name="k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
[[ "$BIN_DIR_NAME" == "$want_dir_name" ]] ||
	die "versions.env: BIN_DIR_NAME=$BIN_DIR_NAME, expected $want_dir_name"
BIN_DIR="$CACHE_DIR/bin/$BIN_DIR_NAME"

# Split "v1.36.3" into the major/minor that Kubernetes' own build stamps.
k8s_semver=${K8S_VERSION#v}
k8s_major=${k8s_semver%%.*}
k8s_minor=${k8s_semver#*.}
k8s_minor=${k8s_minor%%.*}

# The go command must see tools/controlplane/go.mod exactly as committed: no
# workspace, no implicit go.mod/go.sum edits (-mod=readonly also overrides a
# GOFLAGS=-mod=mod).
export GOWORK=off
export CGO_ENABLED=0

gomod_version() {
	go -C "$TOOLS_DIR" list -mod=readonly -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' "$1"
}

# The build in progress, cleaned up if the script stops early. `go build` runs in a
# session (and process group) of its own, so that stopping it also stops the compile
# and link processes it started, and its work directories live in go_tmp, removed at
# exit (SIGTERM stops the go command without its usual cleanup of them).
build_pid=""
tmp_out=""
go_tmp=""
cleanup() {
	if [[ -n "$build_pid" ]]; then
		kill -TERM -- "-$build_pid" 2>/dev/null || kill -TERM "$build_pid" 2>/dev/null || true
		wait "$build_pid" 2>/dev/null || true
	fi
	[[ -n "$tmp_out" ]] && rm -f "$tmp_out" || true
	[[ -n "$go_tmp" ]] && rm -rf "$go_tmp" || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# build NAME VERSION ESTIMATE EXPECT PACKAGE [go build args...]
# Builds PACKAGE into $BIN_DIR/NAME unless it exists. The binary is linked to a
# temporary name, checked with `NAME --version` (must print EXPECT), then renamed,
# so an interrupted or failed build never leaves a partial file under NAME.
build() {
	local name=$1 version=$2 estimate=$3 expect=$4 pkg=$5
	shift 5
	local out="$BIN_DIR/$name"
	if [[ -x "$out" ]]; then
		log "$name $version: cached ($out)"
		return 0
	fi
	log "building $name $version ($estimate the first time on 2 cores)..."
	local start=$SECONDS
	tmp_out="$BIN_DIR/.$name.tmp.$$"
	[[ -n "$go_tmp" ]] || go_tmp=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-e2e-tools.XXXXXX")
	GOTMPDIR=$go_tmp setsid -w go -C "$TOOLS_DIR" build -mod=readonly -trimpath "$@" -o "$tmp_out" "$pkg" &
	build_pid=$!
	# Heartbeat from this shell (no background sleeper that could outlive the script
	# and hold a caller's pipe open): poll once a second, report every 30 s.
	local next_beat=$((start + 30))
	while kill -0 "$build_pid" 2>/dev/null; do
		sleep 1
		if ((SECONDS >= next_beat)); then
			log "  ... still building $name ($((SECONDS - start))s)"
			next_beat=$((next_beat + 30))
		fi
	done
	local rc=0
	wait "$build_pid" || rc=$?
	build_pid=""
	((rc == 0)) || die "go build $pkg failed (exit $rc)"

	local got
	got=$("$tmp_out" --version 2>&1) || die "$name --version failed: $got"
	[[ "$got" == *"$expect"* ]] || die "$name --version printed '$got', expected it to contain '$expect'"
	mv -f "$tmp_out" "$out"
	tmp_out=""
	log "done in $((SECONDS - start))s: $out ($(du -h "$out" | cut -f1))"
}

# go.mod and versions.env must agree, or the directory name would lie about its contents.
[[ "$(gomod_version k8s.io/kubernetes)" == "$K8S_VERSION" ]] ||
	die "tools/controlplane/go.mod requires k8s.io/kubernetes $(gomod_version k8s.io/kubernetes), versions.env says $K8S_VERSION"
[[ "$(gomod_version k8s.io/apiserver)" == "$K8S_STAGING_VERSION" ]] ||
	die "tools/controlplane/go.mod pins k8s.io/apiserver $(gomod_version k8s.io/apiserver), versions.env says $K8S_STAGING_VERSION"
[[ "$(gomod_version go.etcd.io/etcd/server/v3)" == "$ETCD_VERSION" ]] ||
	die "tools/controlplane/go.mod requires go.etcd.io/etcd/server/v3 $(gomod_version go.etcd.io/etcd/server/v3), versions.env says $ETCD_VERSION"

mkdir -p "$BIN_DIR"

# Stamp the version the way Kubernetes' release build does (hack/lib/version.sh), so
# `kube-apiserver --version`, /version and discovery report the real release rather
# than v0.0.0-master. -s -w drops the symbol table and DWARF, as release builds do.
# buildDate is the tag's commit time (from the module proxy), which keeps the build
# reproducible; gitCommit is emptied, since module sources carry no commit hash (its
# default is the unexpanded "$Format:%H$").
k8s_build_date=$(go -C "$TOOLS_DIR" list -mod=readonly -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	k8s_ldflags+=" -X $pkg.gitVersion=$K8S_VERSION"
	k8s_ldflags+=" -X $pkg.gitMajor=$k8s_major"
	k8s_ldflags+=" -X $pkg.gitMinor=$k8s_minor"
	k8s_ldflags+=" -X $pkg.gitCommit="
	k8s_ldflags+=" -X $pkg.gitTreeState=clean"
	k8s_ldflags+=" -X $pkg.buildDate=$k8s_build_date"
done

build kube-apiserver "$K8S_VERSION" "about 8 minutes" "Kubernetes $K8S_VERSION" \
	k8s.io/kubernetes/cmd/kube-apiserver -ldflags "$k8s_ldflags"
build kube-controller-manager "$K8S_VERSION" "about 5 minutes after kube-apiserver" "Kubernetes $K8S_VERSION" \
	k8s.io/kubernetes/cmd/kube-controller-manager -ldflags "$k8s_ldflags"
build kube-scheduler "$K8S_VERSION" "about 1 minute after kube-controller-manager" "Kubernetes $K8S_VERSION" \
	k8s.io/kubernetes/cmd/kube-scheduler -ldflags "$k8s_ldflags"
build kubemark "$K8S_VERSION" "about 3 minutes after kube-scheduler" "Kubernetes $K8S_VERSION" \
	k8s.io/kubernetes/cmd/kubemark -ldflags "$k8s_ldflags"
build etcd "$ETCD_VERSION" "about 1.5 minutes" "etcd Version: ${ETCD_VERSION#v}" \
	go.etcd.io/etcd/server/v3 -ldflags "-s -w"

printf '%s\n' "$BIN_DIR"
