#!/usr/bin/env bash
# Tier T4: run the project's `local` stack through the real Pulumi engine (built by
# scripts/engine/bootstrap.sh), with the Kubernetes provider in renderYamlToDirectory mode, so no
# cluster, no Azure and no network are needed.
#
#   1. pulumi stack init (throw-away PULUMI_HOME and file backend under .e2e/, passphrase secrets)
#   2. pulumi up --yes
#   3. the provider's rendered YAML == `aksray render --stack <stack>` (scripts/engine/compare_render.py)
#   4. a second `pulumi up --expect-no-changes` changes nothing
#   5. for each change in scripts/engine/compare_change.py, `pulumi preview` lists the same steps
#      as `aksray plan --since` computes offline
#   6. pulumi destroy --yes leaves 0 resources in `pulumi stack export`
#   7. pulumi stack rm --yes
#
# Environment: E2E_STACK (default local), PULUMI_CONFIG_PASSPHRASE (default a fixed throw-away
# value; set it if the stack file holds secrets encrypted with another one), E2E_KEEP=1 keeps
# .e2e/ afterwards, E2E_ALLOW_SDK_MISMATCH=1 runs even when the venv's SDKs differ from the engine.
# The stack file is restored byte for byte afterwards (`stack init` may add an encryptionsalt).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
# shellcheck source=scripts/engine/versions.env
. "$here/versions.env"

stack="${E2E_STACK:-local}"
passed=0
fail() {
  echo "e2e: FAILED: $*" >&2
  echo "e2e: $passed passed, 1 failed" >&2
  exit 1
}
say() { printf 'e2e: %s\n' "$*"; }

# --- toolchain --------------------------------------------------------------------------------
bin="$("$here/bootstrap.sh" --print-bin-dir)"
for tool in pulumi pulumi-language-python pulumi-language-python-exec pulumi-resource-kubernetes; do
  if [ ! -x "$bin/$tool" ]; then
    echo "e2e: the engine toolchain is not built (missing ${bin#"$root"/}/$tool)." >&2
    echo "e2e: run scripts/engine/bootstrap.sh first (the engine cold: 17-54 min on 2 cores; cached afterwards)." >&2
    exit 2
  fi
done

# --- Python: the project's virtualenv, with the SDKs the engine was built for ----------------
venv="${E2E_VENV:-$root/.venv}"
[ -x "$venv/bin/python" ] || fail "no virtualenv at ${venv#"$root"/} (create it and install the project first)"
sdk_versions="$("$venv/bin/python" - <<'PY'
from importlib.metadata import version, PackageNotFoundError
out = []
for dist in ("pulumi", "pulumi-kubernetes"):
    try:
        out.append(version(dist))
    except PackageNotFoundError:
        out.append("missing")
print(" ".join(out))
PY
)"
read -r py_pulumi py_k8s <<<"$sdk_versions"
if [ "$py_pulumi" != "$PULUMI_VERSION" ] || [ "$py_k8s" != "$PULUMI_KUBERNETES_VERSION" ]; then
  msg="the virtualenv has pulumi $py_pulumi and pulumi-kubernetes $py_k8s, the engine is $PULUMI_VERSION / $PULUMI_KUBERNETES_VERSION (scripts/engine/versions.env): pin pulumi==$PULUMI_VERSION pulumi-kubernetes==$PULUMI_KUBERNETES_VERSION"
  if [ "${E2E_ALLOW_SDK_MISMATCH:-0}" = 1 ]; then say "warning: $msg"; else fail "$msg"; fi
fi

# --- the stack file and its render directory -----------------------------------------------------
read -r stack_file render_to <<<"$("$venv/bin/python" - "$stack" <<'PY'
import os, sys, yaml
stack = sys.argv[1]
with open("Pulumi.yaml") as f:
    project = yaml.safe_load(f)
config_dir = project.get("stackConfigDir") or "."
path = os.path.join(config_dir, f"Pulumi.{stack}.yaml")
if not os.path.exists(path):
    print(path, "-")
    sys.exit(0)
with open(path) as f:
    doc = yaml.safe_load(f) or {}
cluster = (doc.get("config") or {}).get(f"{project['name']}:cluster") or {}
render = cluster.get("renderYamlTo") if isinstance(cluster, dict) else None
print(path, render or "-")
PY
)"
[ -f "$stack_file" ] || fail "no stack file $stack_file"
[ "$render_to" != "-" ] || fail "$stack_file: cluster.renderYamlTo is empty; the e2e stack must render YAML instead of applying to a cluster"
case "$render_to" in
  /*) render_abs="$render_to" ;;
  *) render_abs="$root/$render_to" ;;
esac
render_abs="$(python3 -c 'import os,sys; print(os.path.normpath(sys.argv[1]))' "$render_abs")"
case "$render_abs" in
  "$root"/?*) ;;
  *) fail "$stack_file: cluster.renderYamlTo ($render_to) must be a folder inside the repository" ;;
esac
# The provider writes Secrets there in plain text: it must never be committed.
git check-ignore -q "$render_abs/x.yaml" \
  || fail "$stack_file: cluster.renderYamlTo ($render_to) is not git-ignored; rendered Secrets are plain text"

# --- throw-away engine state ------------------------------------------------------------------
e2e="$root/.e2e"
rm -rf "${e2e:?}/home" "${e2e:?}/state" "${e2e:?}/aksray-render" "${render_abs:?}"
mkdir -p "$e2e/home" "$e2e/state" "$e2e/aksray-render"
export PULUMI_HOME="$e2e/home"
export PULUMI_BACKEND_URL="file://$e2e/state"
export PULUMI_SKIP_UPDATE_CHECK=1
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=1
export PULUMI_CONFIG_PASSPHRASE="${PULUMI_CONFIG_PASSPHRASE:-e2e-throwaway-passphrase}"
unset PULUMI_CONFIG_PASSPHRASE_FILE PULUMI_ACCESS_TOKEN
export PULUMI_SKIP_CONFIRMATIONS=1
# The language host runs `python3` from PATH: the project's venv first, then the engine.
export VIRTUAL_ENV="$venv"
export PATH="$bin:$venv/bin:$PATH"

stack_backup="$e2e/stack-file.orig"
cp -p "$stack_file" "$stack_backup"
cleanup() {
  cp -p "$stack_backup" "$stack_file"   # `stack init` may have added an encryptionsalt
  if [ "${E2E_KEEP:-0}" != 1 ] && [ "${e2e_ok:-0}" = 1 ]; then
    rm -rf "${e2e:?}/home" "${e2e:?}/state" "${e2e:?}/aksray-render" "${render_abs:?}"
  fi
}
trap cleanup EXIT

log="$e2e/e2e.log"
: >"$log"
# check NAME COMMAND...: run, time, and on failure show the tail of its output.
check() {
  local name="$1"; shift
  local t0 out
  t0=$(date +%s)
  out="$e2e/step.out"
  printf '\n=== %s: %s\n' "$name" "$*" >>"$log"
  if "$@" >"$out" 2>&1; then
    cat "$out" >>"$log"
    passed=$((passed + 1))
    say "$name: ok in $(( $(date +%s) - t0 ))s"
  else
    cat "$out" >>"$log"
    tail -n 40 "$out" >&2
    fail "$name (after $(( $(date +%s) - t0 ))s; full log: ${log#"$root"/})"
  fi
}

say "engine: $("$bin/pulumi" version) + pulumi-resource-kubernetes $PULUMI_KUBERNETES_VERSION; stack $stack; render dir ${render_abs#"$root"/}"

check "stack init $stack" pulumi stack init "$stack" --secrets-provider passphrase --non-interactive
check "pulumi up" pulumi up --yes --stack "$stack" --non-interactive --skip-preview
check "aksray render" aksray render --stack "$stack" --out "$e2e/aksray-render"
check "provider YAML == aksray render" \
  "$venv/bin/python" "$here/compare_render.py" --pulumi "$render_abs" --aksray "$e2e/aksray-render"
say "  $(tail -n 1 "$e2e/step.out")"
check "second pulumi up changes nothing" \
  pulumi up --yes --stack "$stack" --non-interactive --expect-no-changes
check "pulumi preview of each change == aksray plan --since" \
  "$venv/bin/python" "$here/compare_change.py" --stack "$stack" --stack-file "$stack_file"
say "  $(tail -n 1 "$e2e/step.out")"
check "pulumi destroy" pulumi destroy --yes --stack "$stack" --non-interactive --skip-preview

count_resources() {
  pulumi stack export --stack "$stack" >"$e2e/export.json"
  "$venv/bin/python" - "$e2e/export.json" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    resources = (json.load(f).get("deployment") or {}).get("resources") or []
print(f"{len(resources)} resource(s) left after destroy")
for r in resources:
    print("  ", r.get("type"), r.get("urn"))
sys.exit(1 if resources else 0)
PY
}
check "destroy left 0 resources" count_resources
check "stack rm" pulumi stack rm --yes --stack "$stack" --non-interactive

e2e_ok=1
say "$passed passed, 0 failed"
