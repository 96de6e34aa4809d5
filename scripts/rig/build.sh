#!/usr/bin/env bash
# Build the rehearsal rig's binaries (`make rig`) from the Go module proxy, pinned by
# scripts/rig/versions.env, into an ignored cache keyed by those versions:
#
#   ${AKSRAY_RIG_CACHE:-$HOME/.cache/aksray/rig}/<key>/
#       bin/etcd                      go.etcd.io/etcd/server/v3
#       bin/kube-apiserver            k8s.io/kubernetes/cmd/kube-apiserver
#       bin/kube-controller-manager   k8s.io/kubernetes/cmd/kube-controller-manager
#       bin/kube-scheduler            k8s.io/kubernetes/cmd/kube-scheduler (binds what KAI does not serve)
#       bin/kwok                      sigs.k8s.io/kwok/cmd/kwok
#       bin/kueue                     sigs.k8s.io/kueue/cmd/kueue
#       bin/ray-operator              github.com/ray-project/kuberay/ray-operator
#       bin/kai-{scheduler,binder,podgrouper,queuecontroller,admission}
#                                     github.com/NVIDIA/KAI-scheduler/cmd/...
#       data/kueue/crds/*.yaml        Kueue's CRDs and webhook manifest, from its module download
#       data/kueue/webhooks.yaml
#       data/kwok/stages.yaml         kwok's node and pod lifecycle stages, from its module download
#       data/kai/crds/*.yaml          KAI's CRDs, from its module download (deployments/kai-scheduler/crds)
#
# The cache lives outside the repository so that every clone on the machine (and CI) reuses it.
# A second run with the cache present does nothing; a piece rebuilds when its binary is missing or
# its stamp (the pins it was built from) differs; `--force` rebuilds everything. Each step prints
# its time; a failed step prints one line naming the step and the module, and keeps its log.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/rig/versions.env
. "$here/versions.env"

force=0
pieces=""
print_dir=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-dir) print_dir=1 ;;
    etcd|kubernetes|kwok|kueue|kuberay|kai) pieces="$pieces $arg" ;;
    -h|--help)
      sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      echo "usage: scripts/rig/build.sh [--force] [--print-dir] [etcd] [kubernetes] [kwok] [kueue] [kuberay] [kai]"
      exit 0 ;;
    *) echo "rig: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

key="etcd${ETCD_VERSION}-k8s${KUBERNETES_VERSION}-kwok${KWOK_VERSION}-kueue${KUEUE_VERSION}-kuberay${KUBERAY_VERSION}-kai${KAI_VERSION}"
cache="${AKSRAY_RIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aksray/rig}/$key"
if [ "$print_dir" -eq 1 ]; then echo "$cache"; exit 0; fi
bin="$cache/bin"
data="$cache/data"
src="$cache/src"
logs="$cache/logs"

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || { echo "rig: no Go toolchain on PATH (the rig builds from the Go module proxy)" >&2; exit 1; }
export GOFLAGS="-mod=mod -buildvcs=false"
export GOWORK=off
export GOTOOLCHAIN=local
export CGO_ENABLED=0

t_all=$(date +%s)
say() { printf 'rig: %s\n' "$*"; }

# The most telling line of a failed step's log (see scripts/engine/bootstrap.sh).
why() {
  awk '
    /^[[:space:]]*$/ { next }
    { last = $0 }
    /^go: (downloading|creating new go.mod|finding|added|upgraded|to add|to switch|found) / { prev = $0; next }
    /(^go: |[Ee]rror|403|404|410|not available|cannot |undefined|no required module|missing |fatal)/ {
      hit = ($0 ~ /^[[:space:]]*server response:/ && prev != "") ? prev " " $0 : $0
    }
    { prev = $0 }
    END { print (hit != "" ? hit : last) }
  ' "$1" 2>/dev/null | tr -s '\t ' '  ' | cut -c1-400
}

# step NAME MODULE LOG FUNCTION [ARGS...]
step() {
  local name="$1" module="$2" log="$3"; shift 3
  local t0 rc
  t0=$(date +%s)
  printf '\n=== %s (%s)\n' "$name" "$(date -u +%H:%M:%S)" >>"$log"
  set +e
  ( set -euo pipefail; "$@" ) >>"$log" 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    echo "rig: FAILED step '$name' ($module) after $(( $(date +%s) - t0 ))s: $(why "$log") (log: $log)" >&2
    exit 1
  fi
  say "$name: done in $(( $(date +%s) - t0 ))s"
}

fresh_wrapper() {
  rm -rf "$1"
  mkdir -p "$1"
  cd "$1"
  go mod init "$2"
}

module_dir() {
  local json
  if ! json=$(go mod download -json "$1"); then
    printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/go: \1/p' | sed 's/\\n\\t*/ /g' >&2
    return 1
  fi
  printf '%s\n' "$json" | sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",$/\1/p"
}

expect_selected() {
  local got
  got=$(go list -m -f '{{.Version}}' "$1")
  if [ "$got" != "$2" ]; then
    echo "error: the wrapper selected $1 $got, expected $2"
    return 1
  fi
}

wanted() { [ -z "$pieces" ] || [[ " $pieces " == *" $1 "* ]]; }

up_to_date() {
  local piece="$1" stamp="$2"; shift 2
  [ "$force" -eq 0 ] || return 1
  [ -f "$bin/.stamp-$piece" ] && [ "$(cat "$bin/.stamp-$piece")" = "$stamp" ] || return 1
  local f
  for f in "$@"; do [ -e "$f" ] || return 1; done
}

# piece NAME STAMP "FILES" RESOLVE COMPILE MODULE: build one family unless cached.
piece() {
  local name="$1" stamp="$2" files="$3" resolve="$4" compile="$5" module="$6"
  # shellcheck disable=SC2086
  if ! wanted "$name"; then
    say "$name: not requested"
  elif up_to_date "$name" "$stamp" $files; then
    say "$name: cached"
  else
    rm -f "$bin/.stamp-$name"
    step "$name: resolve modules" "$module" "$logs/$name.log" "$resolve"
    step "$name: compile" "$module" "$logs/$name.log" "$compile"
    echo "$stamp" >"$bin/.stamp-$name"
  fi
}

gobuild() {  # gobuild OUT PKG [LDFLAGS]
  go build -p 2 -trimpath -ldflags "-s -w ${3:-}" -o "$1.tmp" "$2"
  mv -f "$1.tmp" "$1"
}

mkdir -p "$bin" "$data" "$src" "$logs"

# --- etcd -------------------------------------------------------------------------------------
ETCD=go.etcd.io/etcd/server/v3
etcd_resolve() {
  fresh_wrapper "$src/etcd" aksray-rig/etcd
  go get -tool "$ETCD@$ETCD_VERSION"
  expect_selected "$ETCD" "$ETCD_VERSION"
  go list -deps "$ETCD" >/dev/null
}
etcd_compile() { cd "$src/etcd" && gobuild "$bin/etcd" "$ETCD" && "$bin/etcd" --version; }
piece etcd "etcd $ETCD_VERSION" "$bin/etcd" etcd_resolve etcd_compile "$ETCD@$ETCD_VERSION"

# --- kube-apiserver, kube-controller-manager, kube-scheduler ----------------------------------
K8S=k8s.io/kubernetes
k8s_resolve() {
  fresh_wrapper "$src/kubernetes" aksray-rig/kubernetes
  local mod
  mod=$(module_dir "$K8S@$KUBERNETES_VERSION" GoMod)
  [ -n "$mod" ] || { echo "error: go mod download $K8S@$KUBERNETES_VERSION gave no GoMod"; return 1; }
  # Every staging module upstream replaces with ./staging/... comes from the proxy instead.
  local m
  for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$mod"); do
    go mod edit -replace="$m=$m@$KUBERNETES_STAGING_VERSION"
  done
  go mod edit -require="$K8S@$KUBERNETES_VERSION" -godebug=default=go1.24
  go get -tool "$K8S/cmd/kube-apiserver@$KUBERNETES_VERSION" \
    "$K8S/cmd/kube-controller-manager@$KUBERNETES_VERSION" \
    "$K8S/cmd/kube-scheduler@$KUBERNETES_VERSION"
  expect_selected "$K8S" "$KUBERNETES_VERSION"
  go list -deps "$K8S/cmd/kube-apiserver" "$K8S/cmd/kube-controller-manager" "$K8S/cmd/kube-scheduler" >/dev/null
}
k8s_ldflags() {
  local minor pkg out=""
  minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    out="$out -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    out="$out -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$out"
}
k8s_compile() {
  cd "$src/kubernetes"
  local c
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    gobuild "$bin/$c" "$K8S/cmd/$c" "$(k8s_ldflags)"
  done
  "$bin/kube-apiserver" --version
}
piece kubernetes "kubernetes $KUBERNETES_VERSION staging $KUBERNETES_STAGING_VERSION" \
  "$bin/kube-apiserver $bin/kube-controller-manager $bin/kube-scheduler" \
  k8s_resolve k8s_compile "$K8S@$KUBERNETES_VERSION"

# --- kwok -------------------------------------------------------------------------------------
KWOK=sigs.k8s.io/kwok
kwok_resolve() {
  fresh_wrapper "$src/kwok" aksray-rig/kwok
  go get -tool "$KWOK/cmd/kwok@$KWOK_VERSION"
  expect_selected "$KWOK" "$KWOK_VERSION"
  go list -deps "$KWOK/cmd/kwok" >/dev/null
}
kwok_compile() {
  cd "$src/kwok"
  gobuild "$bin/kwok" "$KWOK/cmd/kwok" "-X $KWOK/pkg/consts.Version=$KWOK_VERSION"
  local dir stage
  dir=$(module_dir "$KWOK@$KWOK_VERSION" Dir)
  mkdir -p "$data/kwok"
  : >"$data/kwok/stages.yaml.tmp"
  for stage in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
      pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    { echo "---"; cat "$dir/kustomize/stage/$stage"; } >>"$data/kwok/stages.yaml.tmp"
  done
  mv -f "$data/kwok/stages.yaml.tmp" "$data/kwok/stages.yaml"
  "$bin/kwok" --version
}
piece kwok "kwok $KWOK_VERSION" "$bin/kwok $data/kwok/stages.yaml" kwok_resolve kwok_compile "$KWOK@$KWOK_VERSION"

# --- Kueue ------------------------------------------------------------------------------------
KUEUE=sigs.k8s.io/kueue
kueue_resolve() {
  fresh_wrapper "$src/kueue" aksray-rig/kueue
  go get -tool "$KUEUE/cmd/kueue@$KUEUE_VERSION"
  expect_selected "$KUEUE" "$KUEUE_VERSION"
  go list -deps "$KUEUE/cmd/kueue" >/dev/null
}
kueue_compile() {
  cd "$src/kueue"
  gobuild "$bin/kueue" "$KUEUE/cmd/kueue" "-X $KUEUE/pkg/version.GitVersion=$KUEUE_VERSION"
  local dir
  dir=$(module_dir "$KUEUE@$KUEUE_VERSION" Dir)
  rm -rf "$data/kueue"
  mkdir -p "$data/kueue/crds"
  cp "$dir"/config/components/crd/bases/*.yaml "$data/kueue/crds/"
  cp "$dir/config/components/webhook/manifests.yaml" "$data/kueue/webhooks.yaml"
  chmod -R u+w "$data/kueue"
}
piece kueue "kueue $KUEUE_VERSION" "$bin/kueue $data/kueue/webhooks.yaml" kueue_resolve kueue_compile "$KUEUE@$KUEUE_VERSION"

# --- KubeRay operator -------------------------------------------------------------------------
KUBERAY=github.com/ray-project/kuberay/ray-operator
kuberay_resolve() {
  fresh_wrapper "$src/kuberay" aksray-rig/kuberay
  go get -tool "$KUBERAY@$KUBERAY_VERSION"
  expect_selected "$KUBERAY" "$KUBERAY_VERSION"
  go list -deps "$KUBERAY" >/dev/null
}
kuberay_compile() { cd "$src/kuberay" && gobuild "$bin/ray-operator" "$KUBERAY"; }
piece kuberay "kuberay $KUBERAY_VERSION" "$bin/ray-operator" kuberay_resolve kuberay_compile "$KUBERAY@$KUBERAY_VERSION"

# --- KAI scheduler ----------------------------------------------------------------------------
# The components its chart's operator would deploy, each one binary: scheduler, binder, pod
# grouper, queue controller and the admission webhooks.
KAI=github.com/NVIDIA/KAI-scheduler
KAI_COMMANDS="scheduler binder podgrouper queuecontroller admission"
kai_resolve() {
  fresh_wrapper "$src/kai" aksray-rig/kai
  local c pkgs=""
  for c in $KAI_COMMANDS; do pkgs="$pkgs $KAI/cmd/$c@$KAI_VERSION"; done
  # shellcheck disable=SC2086
  go get -tool $pkgs
  expect_selected "$KAI" "$KAI_VERSION"
  for c in $KAI_COMMANDS; do go list -deps "$KAI/cmd/$c" >/dev/null; done
}
kai_compile() {
  cd "$src/kai"
  local c dir
  for c in $KAI_COMMANDS; do gobuild "$bin/kai-$c" "$KAI/cmd/$c"; done
  dir=$(module_dir "$KAI@$KAI_VERSION" Dir)
  rm -rf "$data/kai"
  mkdir -p "$data/kai/crds"
  cp "$dir"/deployments/kai-scheduler/crds/*.yaml "$data/kai/crds/"
  chmod -R u+w "$data/kai"
}
kai_bins=""
for c in $KAI_COMMANDS; do kai_bins="$kai_bins $bin/kai-$c"; done
piece kai "kai $KAI_VERSION $KAI_COMMANDS" "$kai_bins $data/kai/crds" kai_resolve kai_compile "$KAI@$KAI_VERSION"

cat >"$cache/versions.json" <<JSON
{"etcd": "$ETCD_VERSION", "kubernetes": "$KUBERNETES_VERSION", "kwok": "$KWOK_VERSION", "kueue": "$KUEUE_VERSION", "kuberay": "$KUBERAY_VERSION", "kai": "$KAI_VERSION"}
JSON
say "rig ready in $(( $(date +%s) - t_all ))s: $cache"
