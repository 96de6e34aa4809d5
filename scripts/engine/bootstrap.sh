#!/usr/bin/env bash
# Build the pinned Pulumi engine for tier T4 (`make e2e`) from source through the Go module proxy:
#
#   ${AKSRAY_ENGINE_CACHE:-$HOME/.cache/aksray/engine}/<PULUMI_VERSION>-k8s<PULUMI_KUBERNETES_VERSION>/bin/
#       pulumi                        Pulumi CLI            (github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
#       pulumi-language-python        Python language host  (see versions.env for where it comes from)
#       pulumi-language-python-exec   its executor script   (from sdk/v3 at PULUMI_VERSION), mode 0755
#       pulumi-resource-pulumi-python the Python dynamic provider host (a script, sdk/v3 likewise)
#       pulumi-resource-kubernetes    Kubernetes provider   (github.com/pulumi/pulumi-kubernetes/provider/v4)
#
# Versions come from scripts/engine/versions.env (the Python side reads the same file).
# Each tool family is built in its own throw-away wrapper module under the cache folder, so one
# tool's dependency versions never drift another's. Nothing is written outside the cache folder
# except Go's own module and build caches (GOMODCACHE / GOCACHE, outside the repository).
#
# A second run with the cache present does nothing. A piece is rebuilt when its binary is missing
# or its stamp (the pins it was built from) differs. `--force` rebuilds everything.
# Cold build of the engine: 17-54 min on 2 cores (17 on a quiet machine, 54 on a busy one), plus
# about 8 GB of Go module and build caches outside the repository.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=scripts/engine/versions.env
. "$here/versions.env"

force=0
pieces=""
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    cli|python|kubernetes) pieces="$pieces $arg" ;;
    --print-bin-dir) ;;  # handled below, after the paths are known
    -h|--help)
      sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      echo "usage: scripts/engine/bootstrap.sh [--force] [--print-bin-dir] [cli] [python] [kubernetes]"
      exit 0 ;;
    *) echo "bootstrap: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

key="${PULUMI_VERSION}-k8s${PULUMI_KUBERNETES_VERSION}"
# Outside the repository, so every clone on the machine (CI's too) reuses one build.
cache="${AKSRAY_ENGINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aksray/engine}/$key"
bin="$cache/bin"
src="$cache/src"
logs="$cache/logs"

for arg in "$@"; do
  if [ "$arg" = "--print-bin-dir" ]; then echo "$bin"; exit 0; fi
done

# --- Go environment ---------------------------------------------------------------------------
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
export GOFLAGS="-mod=mod -buildvcs=false"  # wrappers resolve their own deps; no VCS stamping from our repo
export GOWORK=off                          # never pick up a go.work from above
export GOTOOLCHAIN=local                   # fail clearly instead of fetching another Go
export CGO_ENABLED=0

t_all=$(date +%s)

# --- helpers ----------------------------------------------------------------------------------
say() { printf 'bootstrap: %s\n' "$*"; }

# The most telling line of a failed step's log: the last line that carries an error (joined with
# the line before when Go put the proxy's answer on a line of its own), else the last non-empty line.
why() {
  awk '
    /^[[:space:]]*$/ { next }
    { last = $0 }
    /^go: (downloading|creating new go.mod|finding|added|upgraded|to add|to switch|found) / { prev = $0; next }
    /(^go: |[Ee]rror|403|404|410|not available|cannot |undefined|no required module|missing |fatal|Traceback)/ {
      hit = ($0 ~ /^[[:space:]]*server response:/ && prev != "") ? prev " " $0 : $0
    }
    { prev = $0 }
    END { print (hit != "" ? hit : last) }
  ' "$1" 2>/dev/null | tr -s '\t ' '  ' | cut -c1-400
}

# step NAME LOGFILE FUNCTION [ARGS...]: run FUNCTION with its output appended to LOGFILE, print its
# elapsed time, and on failure print one line naming the step and what Go/the proxy said, then exit.
step() {
  local name="$1" log="$2"; shift 2
  local t0 rc
  t0=$(date +%s)
  printf '\n=== %s (%s)\n' "$name" "$(date -u +%H:%M:%S)" >>"$log"
  set +e
  ( set -euo pipefail; "$@" ) >>"$log" 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    echo "bootstrap: FAILED step '$name' after $(( $(date +%s) - t0 ))s: $(why "$log") (full log: ${log#"$root"/})" >&2
    exit 1
  fi
  say "$name: done in $(( $(date +%s) - t0 ))s"
}

# fresh_wrapper DIR MODULE: an empty wrapper module.
fresh_wrapper() {
  rm -rf "$1"
  mkdir -p "$1"
  cd "$1"
  go mod init "$2"
}

# module_dir MODULE@VERSION: where the module's files are in the module cache (downloads it).
module_dir() {
  local json
  if ! json=$(go mod download -json "$1"); then
    printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/go: \1/p' | sed 's/\\n\\t*/ /g' >&2
    return 1
  fi
  printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# selected MODULE: the version the current wrapper's build list selected.
expect_selected() {
  local got
  got=$(go list -m -f '{{.Version}}' "$1")
  if [ "$got" != "$2" ]; then
    echo "error: the wrapper selected $1 $got, expected $2 (a dependency requires a newer one)"
    return 1
  fi
}

# wanted PIECE: no pieces named on the command line, or this one is named.
wanted() { [ -z "$pieces" ] || [[ " $pieces " == *" $1 "* ]]; }

# up_to_date PIECE STAMP FILES...: the piece's files exist and its stamp matches.
up_to_date() {
  local piece="$1" stamp="$2"; shift 2
  [ "$force" -eq 0 ] || return 1
  [ -f "$bin/.stamp-$piece" ] && [ "$(cat "$bin/.stamp-$piece")" = "$stamp" ] || return 1
  local f
  for f in "$@"; do [ -x "$bin/$f" ] || return 1; done
}

mkdir -p "$bin" "$src" "$logs"

# --- 1. Pulumi CLI ----------------------------------------------------------------------------
PKG=github.com/pulumi/pulumi/pkg/v3
SDK=github.com/pulumi/pulumi/sdk/v3
cli_stamp="pulumi pkg/v3@v$PULUMI_VERSION sdk/v3@v$PULUMI_VERSION clipboard=$PULUMI_CLIPBOARD_REPLACE"

cli_resolve() {
  fresh_wrapper "$src/cli" aksray-engine/cli
  go mod edit \
    -require="$PKG@v$PULUMI_VERSION" \
    -require="$SDK@v$PULUMI_VERSION" \
    -replace="github.com/atotto/clipboard=$PULUMI_CLIPBOARD_REPLACE"
  go get -tool "$PKG/cmd/pulumi@v$PULUMI_VERSION"
  expect_selected "$PKG" "v$PULUMI_VERSION"
  expect_selected "$SDK" "v$PULUMI_VERSION"
  go list -deps "$PKG/cmd/pulumi" >/dev/null   # downloads every module the build needs
}
cli_compile() {
  cd "$src/cli"
  go build -trimpath -tags osusergo,grpcnotrace \
    -ldflags "-s -w -X $SDK/go/common/version.Version=v$PULUMI_VERSION" \
    -o "$bin/pulumi.tmp" "$PKG/cmd/pulumi"
  mv -f "$bin/pulumi.tmp" "$bin/pulumi"
  "$bin/pulumi" version
}

if ! wanted cli; then
  say "pulumi v$PULUMI_VERSION: not requested"
elif up_to_date cli "$cli_stamp" pulumi; then
  say "pulumi v$PULUMI_VERSION: cached"
else
  rm -f "$bin/.stamp-cli"
  step "pulumi v$PULUMI_VERSION: resolve modules" "$logs/cli.log" cli_resolve
  step "pulumi v$PULUMI_VERSION: compile" "$logs/cli.log" cli_compile
  echo "$cli_stamp" >"$bin/.stamp-cli"
fi

# --- 2. Python language host + executor -------------------------------------------------------
HOST_PKG=$SDK/python/cmd/pulumi-language-python
py_stamp="python host sdk/v3@v$PULUMI_LANGUAGE_PYTHON_HOST_SDK_VERSION exec sdk/v3@v$PULUMI_VERSION"

py_resolve() {
  fresh_wrapper "$src/python" aksray-engine/python
  go mod edit -require="$SDK@v$PULUMI_LANGUAGE_PYTHON_HOST_SDK_VERSION"
  go get "$HOST_PKG@v$PULUMI_LANGUAGE_PYTHON_HOST_SDK_VERSION"
  expect_selected "$SDK" "v$PULUMI_LANGUAGE_PYTHON_HOST_SDK_VERSION"
  go list -deps "$HOST_PKG" >/dev/null
}
py_compile() {
  cd "$src/python"
  go build -trimpath -tags osusergo,grpcnotrace \
    -ldflags "-s -w -X $SDK/go/common/version.Version=v$PULUMI_LANGUAGE_PYTHON_HOST_SDK_VERSION" \
    -o "$bin/pulumi-language-python.tmp" "$HOST_PKG"
  mv -f "$bin/pulumi-language-python.tmp" "$bin/pulumi-language-python"
}
py_exec() {
  local dir
  dir=$(module_dir "$SDK@v$PULUMI_VERSION")
  [ -n "$dir" ] || { echo "error: go mod download $SDK@v$PULUMI_VERSION gave no Dir"; return 1; }
  install -m 0755 "$dir/python/cmd/pulumi-language-python-exec" "$bin/pulumi-language-python-exec"
}
# The CLI starts it for `pulumi.dynamic` resources (the program's wait for the deployer's
# access, components/deployer_access.py), as the released CLI ships it beside the language host.
py_dynamic() {
  local dir
  dir=$(module_dir "$SDK@v$PULUMI_VERSION")
  [ -n "$dir" ] || { echo "error: go mod download $SDK@v$PULUMI_VERSION gave no Dir"; return 1; }
  install -m 0755 "$dir/python/dist/pulumi-resource-pulumi-python" "$bin/pulumi-resource-pulumi-python"
}

if ! wanted python; then
  say "pulumi-language-python: not requested"
elif up_to_date python "$py_stamp" pulumi-language-python pulumi-language-python-exec; then
  say "pulumi-language-python: cached"
else
  rm -f "$bin/.stamp-python"
  step "pulumi-language-python (sdk/v3 v$PULUMI_LANGUAGE_PYTHON_HOST_SDK_VERSION): resolve modules" "$logs/python.log" py_resolve
  step "pulumi-language-python: compile" "$logs/python.log" py_compile
  step "pulumi-language-python-exec (sdk/v3 v$PULUMI_VERSION): install" "$logs/python.log" py_exec
  echo "$py_stamp" >"$bin/.stamp-python"
fi

if wanted python && [ ! -x "$bin/pulumi-resource-pulumi-python" ]; then
  step "pulumi-resource-pulumi-python (sdk/v3 v$PULUMI_VERSION): install" "$logs/python.log" py_dynamic
fi

# --- 3. Kubernetes provider -------------------------------------------------------------------
K8S=github.com/pulumi/pulumi-kubernetes/provider/v4
k8s_stamp="kubernetes $PULUMI_KUBERNETES_VERSION provider/v4@$PULUMI_KUBERNETES_PROVIDER_MODULE_VERSION"

k8s_resolve() {
  fresh_wrapper "$src/kubernetes" aksray-engine/kubernetes
  local dir
  dir=$(module_dir "$K8S@$PULUMI_KUBERNETES_PROVIDER_MODULE_VERSION")
  [ -n "$dir" ] || { echo "error: go mod download $K8S@$PULUMI_KUBERNETES_PROVIDER_MODULE_VERSION gave no Dir"; return 1; }
  local cmd="$dir/cmd/pulumi-resource-kubernetes"
  # The upstream main embeds generated files (git-ignored upstream, so absent from the module):
  # the schema with its version set, and compact re-serialisations of the mappings.
  python3 - "$cmd" "$PULUMI_KUBERNETES_VERSION" <<'PY'
import json, os, sys
cmd, version = sys.argv[1], sys.argv[2]
with open(os.path.join(cmd, "schema.json")) as f:
    schema = json.load(f)
schema["version"] = version
with open("schema-embed.json", "w") as f:
    json.dump(schema, f, separators=(",", ":"))
with open(os.path.join(cmd, "terraform-mapping.json")) as f:
    mapping = json.load(f)
with open("terraform-mapping-embed.json", "w") as f:
    json.dump(mapping, f, separators=(",", ":"))
PY
  # Later provider versions also embed helm-mapping.json and Serve takes it as a 5th argument.
  local helm_embed="" helm_arg=""
  if [ -f "$cmd/helm-mapping.json" ]; then
    cp "$cmd/helm-mapping.json" helm-mapping.json
    chmod u+w helm-mapping.json
    helm_embed=$'\n//go:embed helm-mapping.json\nvar helmMapping []byte\n'
    helm_arg=", helmMapping"
  fi
  cat >main.go <<GO
// Generated by scripts/engine/bootstrap.sh: the provider's own main, with the files it embeds.
package main

import (
	_ "embed"

	"$K8S/pkg/provider"
	"$K8S/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte
$helm_embed
func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping$helm_arg)
}
GO
  go get "$K8S@$PULUMI_KUBERNETES_PROVIDER_MODULE_VERSION"
  expect_selected "$K8S" "$PULUMI_KUBERNETES_PROVIDER_MODULE_VERSION"
  go list -deps . >/dev/null
}
k8s_compile() {
  cd "$src/kubernetes"
  go build -trimpath \
    -ldflags "-s -w -X $K8S/pkg/version.Version=$PULUMI_KUBERNETES_VERSION" \
    -o "$bin/pulumi-resource-kubernetes.tmp" .
  mv -f "$bin/pulumi-resource-kubernetes.tmp" "$bin/pulumi-resource-kubernetes"
}

if ! wanted kubernetes; then
  say "pulumi-resource-kubernetes $PULUMI_KUBERNETES_VERSION: not requested"
elif up_to_date kubernetes "$k8s_stamp" pulumi-resource-kubernetes; then
  say "pulumi-resource-kubernetes $PULUMI_KUBERNETES_VERSION: cached"
else
  rm -f "$bin/.stamp-kubernetes"
  step "pulumi-resource-kubernetes $PULUMI_KUBERNETES_VERSION: resolve modules" "$logs/kubernetes.log" k8s_resolve
  step "pulumi-resource-kubernetes $PULUMI_KUBERNETES_VERSION: compile" "$logs/kubernetes.log" k8s_compile
  echo "$k8s_stamp" >"$bin/.stamp-kubernetes"
fi

say "engine ready in $(( $(date +%s) - t_all ))s: ${bin#"$root"/}"
