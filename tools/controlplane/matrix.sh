#!/usr/bin/env bash
# Runs the e2e suite against other kube-apiserver minors than the pinned one
# (versions.env), each built from module sources like build.sh does. Not part of
# `make test`; run it with `make e2e-matrix`.
#
# usage: tools/controlplane/matrix.sh [CACHE_DIR]     (default CACHE_DIR: <repo root>/.cache/e2e)
#        E2E_MATRIX_VERSIONS="v1.35.4 v1.34.4" tools/controlplane/matrix.sh
#
# For each version: a throwaway tools module in $CACHE_DIR/matrix/<version>/, the
# binary in $CACHE_DIR/bin/k8s-<version>-etcd-<ETCD_VERSION>/ (kube-apiserver built
# once, then cached; etcd copied from build.sh's pinned directory), then
#   cd e2e && KUBEBUILDER_ASSETS=<that dir> go test -count=1 -timeout 20m ./...
# A summary table ends the run; the exit status is 1 if any version failed.
set -euo pipefail

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$TOOLS_DIR/../.." && pwd -P)

# shellcheck source-path=SCRIPTDIR source=versions.env
source "$TOOLS_DIR/versions.env"

# Served by the Go module proxy, other minors than the pinned v1.36.3. v1.37.2's
# go.mod says `go 1.26.0`; a version needing a newer Go than the local toolchain is
# skipped with a reason rather than failed.
DEFAULT_VERSIONS="v1.35.4 v1.34.4 v1.37.2"
read -r -a versions <<<"${E2E_MATRIX_VERSIONS:-$DEFAULT_VERSIONS}"
if ((${#versions[@]} == 0)); then
	echo "matrix.sh: E2E_MATRIX_VERSIONS is empty" >&2
	exit 2
fi

CACHE_DIR=${1:-$REPO_ROOT/.cache/e2e}
mkdir -p "$CACHE_DIR"
CACHE_DIR=$(cd "$CACHE_DIR" && pwd -P)

export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0

log() { printf '%s\n' "$*" >&2; }

go_version=$(go env GOVERSION) # go1.26.8
go_version=${go_version#go}

# The command in progress (its own session, so stopping it stops what it started),
# its temporary output and the go command's work directories; cleaned up on exit.
run_pid=""
tmp_out=""
go_tmp=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-e2e-matrix.XXXXXX")
# shellcheck disable=SC2317 # reached through the EXIT trap (shellcheck 0.9 misses that)
cleanup() {
	if [[ -n "$run_pid" ]]; then
		# The whole session: envtest starts etcd and kube-apiserver in process
		# groups of their own, and the test binary outlives a TERM to its group.
		# TERM, then KILL whatever is left after 10 s.
		pkill -TERM -s "$run_pid" 2>/dev/null || true
		local i
		for ((i = 0; i < 10; i++)); do
			pgrep -s "$run_pid" >/dev/null || break
			sleep 1
		done
		pkill -KILL -s "$run_pid" 2>/dev/null || true
		wait "$run_pid" 2>/dev/null || true
	fi
	if [[ -n "$tmp_out" ]]; then rm -f "$tmp_out"; fi
	rm -rf "$go_tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_beat LABEL CMD... runs CMD with a "still <LABEL>" line every 30 s, as build.sh
# does for its builds (polling from this shell, no background sleeper).
run_beat() {
	local label=$1 start=$SECONDS rc=0
	shift
	GOTMPDIR=$go_tmp setsid -w "$@" &
	run_pid=$!
	local next_beat=$((start + 30))
	while kill -0 "$run_pid" 2>/dev/null; do
		sleep 1
		if ((SECONDS >= next_beat)); then
			log "  ... still $label ($((SECONDS - start))s)"
			next_beat=$((next_beat + 30))
		fi
	done
	wait "$run_pid" || rc=$?
	run_pid=""
	return "$rc"
}

# The pinned etcd (and kube-apiserver) first: every version reuses that etcd.
log "== pinned binaries (tools/controlplane/build.sh)"
pinned_dir=$("$TOOLS_DIR/build.sh" "$CACHE_DIR" | tail -1)
[[ -x "$pinned_dir/etcd" ]] || { log "matrix.sh: no etcd in $pinned_dir"; exit 1; }

# build_version VERSION: sets bin_dir and build_note, or returns 1 (failed) / 2 (skipped)
# with the reason in build_note.
build_version() {
	local v=$1
	bin_dir="$CACHE_DIR/bin/k8s-$v-etcd-$ETCD_VERSION"
	if [[ "$v" == "$K8S_VERSION" ]]; then
		bin_dir=$pinned_dir build_note="pinned (build.sh)"
		return 0
	fi
	if [[ -x "$bin_dir/kube-apiserver" && -x "$bin_dir/etcd" ]]; then
		build_note="cached"
		log "kube-apiserver $v: cached ($bin_dir)"
		return 0
	fi
	if [[ ! "$v" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]]; then
		build_note="not a v1.X.Y version"
		return 1
	fi
	local minor=${BASH_REMATCH[1]} patch=${BASH_REMATCH[2]}
	local staging="v0.$minor.$patch"
	local work="$CACHE_DIR/matrix/$v"
	mkdir -p "$work" "$bin_dir"

	# That release's own go.mod: its `go` line and its `=> ./staging/...` replaces.
	local gomod need
	gomod=$(go -C "$work" mod download -json "k8s.io/kubernetes@$v" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p') || true
	if [[ -z "$gomod" || ! -f "$gomod" ]]; then
		build_note="go mod download k8s.io/kubernetes@$v failed"
		return 1
	fi
	need=$(sed -n 's/^go \([0-9][0-9.a-z]*\)$/\1/p' "$gomod")
	if [[ "$(printf '%s\n%s\n' "$need" "$go_version" | sort -V | tail -1)" != "$go_version" ]]; then
		build_note="needs go $need, local toolchain is go $go_version"
		return 2
	fi
	local staging_mods
	staging_mods=$(awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$gomod")

	# The same shape as tools/controlplane/go.mod (which pins the default version):
	# both requirements, so the shared dependencies resolve as they do there, and every
	# staging module replaced by its published v0.X.Y tag. A newer k8s.io/kubernetes
	# may require a newer etcd module (v1.37.2: v3.7.0), which then wins; the etcd
	# binary is the pinned one either way.
	{
		echo "module gatehouse.dev/e2e-matrix/k8s-$v"
		echo
		echo "go $go_version"
		echo
		echo "require ("
		echo "	go.etcd.io/etcd/server/v3 $ETCD_VERSION"
		echo "	k8s.io/kubernetes $v"
		echo ")"
		echo
		echo "replace ("
		local m
		for m in $staging_mods; do
			echo "	$m => $m $staging"
		done
		echo ")"
	} >"$work/go.mod"
	cat >"$work/tools.go" <<-'EOF'
		//go:build tools

		// Generated by tools/controlplane/matrix.sh; keeps `go mod tidy` from dropping the requirements.
		package tools

		import (
			_ "go.etcd.io/etcd/server/v3"
			_ "k8s.io/kubernetes/cmd/kube-apiserver"
		)
	EOF
	log "kube-apiserver $v: go mod tidy in $work ($(wc -w <<<"$staging_mods") staging modules at $staging)"
	if ! go -C "$work" mod tidy; then
		build_note="go mod tidy failed (is every staging module published at $staging?)"
		return 1
	fi
	local etcd_mod
	etcd_mod=$(go -C "$work" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
	if [[ "$etcd_mod" != "$ETCD_VERSION" ]]; then
		log "  note: k8s.io/kubernetes $v requires go.etcd.io/etcd/server/v3 $etcd_mod, which the module resolves with;"
		log "  the etcd binary stays the pinned $ETCD_VERSION"
	fi

	# Version stamp and flags as in build.sh (kept in step by hand: build.sh builds
	# only the pinned version and carries its own cleanup, so sharing would mean
	# restructuring it for a small gain).
	local ldflags="-s -w" pkg
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
	done
	log "building kube-apiserver $v (about 8 minutes the first time on 2 cores)..."
	local start=$SECONDS
	tmp_out="$bin_dir/.kube-apiserver.tmp.$$"
	if ! run_beat "building kube-apiserver $v" \
		go -C "$work" build -mod=readonly -trimpath -ldflags "$ldflags" -o "$tmp_out" k8s.io/kubernetes/cmd/kube-apiserver; then
		build_note="go build failed after $((SECONDS - start))s"
		return 1
	fi
	local got
	got=$("$tmp_out" --version 2>&1) || true
	if [[ "$got" != *"Kubernetes $v"* ]]; then
		build_note="--version printed '$got'"
		return 1
	fi
	mv -f "$tmp_out" "$bin_dir/kube-apiserver"
	tmp_out=""
	# The pinned etcd, copied (not linked) so a later cleanup of the pinned directory
	# leaves this one whole.
	cp -f "$pinned_dir/etcd" "$bin_dir/.etcd.tmp.$$"
	mv -f "$bin_dir/.etcd.tmp.$$" "$bin_dir/etcd"
	build_note="$((SECONDS - start))s"
	log "done in $build_note: $bin_dir/kube-apiserver ($(du -h "$bin_dir/kube-apiserver" | cut -f1))"
}

rows=()
failed=0
for v in "${versions[@]}"; do
	log ""
	log "== $v"
	rc=0
	build_version "$v" || rc=$?
	if ((rc == 2)); then
		log "skipping $v: $build_note"
		rows+=("$v|$build_note|skipped")
		continue
	fi
	if ((rc != 0)); then
		log "matrix.sh: $v: $build_note"
		rows+=("$v|FAILED: $build_note|not run")
		failed=1
		continue
	fi
	log "running the e2e suite against kube-apiserver $v ($bin_dir)"
	# The suite's and envtest's work directories (logs, etcd data) go here: kept
	# when the suite fails, cleared before the next run of this version.
	test_tmp="$CACHE_DIR/matrix/$v/tmp"
	rm -rf "$test_tmp"
	mkdir -p "$test_tmp"
	start=$SECONDS
	rc=0
	TMPDIR=$test_tmp KUBEBUILDER_ASSETS=$bin_dir run_beat "testing against $v" \
		go -C "$REPO_ROOT/e2e" test -count=1 -timeout 20m ./... || rc=$?
	if ((rc == 0)); then
		rows+=("$v|$build_note|PASS ($((SECONDS - start))s)")
		rm -rf "$test_tmp"
	else
		rows+=("$v|$build_note|FAIL (exit $rc, $((SECONDS - start))s)")
		log "e2e against $v failed; its work directories (logs) are in $test_tmp"
		failed=1
	fi
done

log ""
log "e2e matrix (etcd $ETCD_VERSION, $(go env GOVERSION)):"
rows=("VERSION|KUBE-APISERVER BUILD|E2E" "${rows[@]}")
w1=0 w2=0
for row in "${rows[@]}"; do
	IFS='|' read -r a b _ <<<"$row"
	((${#a} > w1)) && w1=${#a}
	((${#b} > w2)) && w2=${#b}
done
for row in "${rows[@]}"; do
	IFS='|' read -r a b c <<<"$row"
	printf '  %-*s  %-*s  %s\n' "$w1" "$a" "$w2" "$b" "$c" >&2
done
exit "$failed"
