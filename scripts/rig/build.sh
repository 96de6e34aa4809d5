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
#       data/kwok/stages.yaml         kwok's node and pod lifecycle stages, from its module download
#       bin/..., data/...             each controller's binaries and data files, as its module of
#                                     aksray/rehearse/rig/controllers/ declares them (its BUILD:
#                                     `.venv/bin/python -m aksray.rehearse.rig.recipes` lists them;
#                                     today Kueue, KAI's five services and the KubeRay operator)
#       bin/<binary>-<version>, data/<top>-<version>/
#                                     a controller's previous version (<NAME>_PREVIOUS_VERSION), for
#                                     the operator-upgrade rehearsal: piece <piece>-<version>
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
list=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-dir) print_dir=1 ;;
    --list-controllers) list=1 ;;
    -h|--help)
      sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"
      echo "usage: scripts/rig/build.sh [--force] [--print-dir] [--list-controllers] [PIECE...] (etcd, kubernetes, kwok, or a controller's piece)"
      exit 0 ;;
    -*) echo "rig: unknown argument: $arg" >&2; exit 2 ;;
    *) pieces="$pieces $arg" ;;
  esac
done

# The cache's key: every <NAME>_VERSION pin of versions.env in its order (what the platform ships,
# the staging modules and earlier versions aside), `kubernetes` written k8s.
key=$(sed -n 's/^\([A-Z0-9]*\)_VERSION=\(.*\)$/\1 \2/p' "$here/versions.env" |
  awk '{ n = tolower($1); if (n == "kubernetes") n = "k8s"; printf "%s%s%s", sep, n, $2; sep = "-" }')
cache="${AKSRAY_RIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aksray/rig}/$key"
if [ "$print_dir" -eq 1 ]; then echo "$cache"; exit 0; fi

# One tab-separated recipe per controller module of aksray/rehearse/rig/controllers/: piece,
# module, version, stamp, binary=package pairs, ldflags, data=source pairs.
root="$(cd "$here/../.." && pwd)"
py="${AKSRAY_PYTHON:-$root/.venv/bin/python}"
recipes=$(cd "$root" && "$py" -m aksray.rehearse.rig.recipes) ||
  { echo "rig: cannot read the controllers' build recipes with $py (run \`make install\` first)" >&2; exit 1; }
mapfile -t recipe_lines <<<"$recipes"
# parse_recipe LINE: sets c_piece ... c_data. A tab is whitespace to `read`: two in a row (an
# empty field) would collapse into one, so the fields are split on a separator that is not.
parse_recipe() {
  IFS=$'\x1f' read -r c_piece c_module c_version c_stamp c_commands c_ldflags c_data \
    <<<"${1//$'\t'/$'\x1f'}"
}
if [ "$list" -eq 1 ]; then  # what each controller piece builds, as this script reads it
  for line in "${recipe_lines[@]}"; do
    parse_recipe "$line"
    printf '%s|%s|%s|%s|%s\n' "$c_piece" "$c_version" "$c_commands" "$c_ldflags" "$c_data"
  done
  exit 0
fi
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

# --- the controllers (their recipes are read above) ------------------------------------------
pkg_of() { local p="${1#*=}"; echo "$c_module${p:+/$p}"; }
controller_resolve() {
  fresh_wrapper "$src/$c_piece" "aksray-rig/$c_piece"
  local pair pkgs=""
  for pair in $c_commands; do pkgs="$pkgs $(pkg_of "$pair")@$c_version"; done
  # shellcheck disable=SC2086
  go get -tool $pkgs
  expect_selected "$c_module" "$c_version"
  for pair in $c_commands; do go list -deps "$(pkg_of "$pair")" >/dev/null; done
}
controller_compile() {
  cd "$src/$c_piece"
  local pair dir target source
  for pair in $c_commands; do gobuild "$bin/${pair%%=*}" "$(pkg_of "$pair")" "$c_ldflags"; done
  [ -n "$c_data" ] || return 0
  dir=$(module_dir "$c_module@$c_version" Dir)
  for pair in $c_data; do
    target="$data/${pair%%=*}" source="${pair#*=}"
    if [[ "$source" == *"*"* ]]; then
      rm -rf "$target" && mkdir -p "$target"
      # shellcheck disable=SC2086
      cp "$dir"/$source "$target/"
    else
      mkdir -p "$(dirname "$target")" && cp "$dir/$source" "$target"
    fi
    chmod -R u+w "$target"
  done
}
controller_versions=""
for line in "${recipe_lines[@]}"; do
  parse_recipe "$line"
  files=""
  for pair in $c_commands; do files="$files $bin/${pair%%=*}"; done
  for pair in $c_data; do files="$files $data/${pair%%=*}"; done
  piece "$c_piece" "$c_stamp" "$files" controller_resolve controller_compile "$c_module@$c_version"
  controller_versions="$controller_versions, \"$c_piece\": \"$c_version\""
done

cat >"$cache/versions.json" <<JSON
{"etcd": "$ETCD_VERSION", "kubernetes": "$KUBERNETES_VERSION", "kwok": "$KWOK_VERSION"$controller_versions}
JSON
say "rig ready in $(( $(date +%s) - t_all ))s: $cache"
