#!/usr/bin/env bash
# Run the engine that scripts/engine/bootstrap.sh built by hand, as `make e2e` runs it:
#
#   scripts/engine/pulumi.sh stack init local --secrets-provider passphrase
#   scripts/engine/pulumi.sh up --yes --stack local
#   scripts/engine/pulumi.sh destroy --yes --stack local
#
# Throw-away PULUMI_HOME and file backend under .e2e/ (each may be set instead), no plugin
# downloads, the project's .venv first on PATH, and PULUMI_CONFIG_PASSPHRASE defaulting to the
# same throw-away value as e2e.sh. The passphrase provider writes an `encryptionsalt:` line into
# the tracked stack file: this script keeps it in .e2e/salts/ instead, putting it back for the
# length of each command and taking it out again afterwards (scripts/engine/stack_salt.py), so
# `git status` stays clean. AKSRAY_PROJECT_DIR names another project folder (the tests use one).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
project="${AKSRAY_PROJECT_DIR:-$(cd "$here/../.." && pwd)}"
cd "$project"

bin="$("$here/bootstrap.sh" --print-bin-dir)"
if [ ! -x "$bin/pulumi" ]; then
  echo "pulumi.sh: the engine is not built (no $bin/pulumi): run make engine first (the engine cold: 17-54 min on 2 cores)" >&2
  exit 2
fi
stacks="$(python3 -c 'import sys, yaml; print(yaml.safe_load(open("Pulumi.yaml")).get("stackConfigDir") or ".")' 2>/dev/null \
  || sed -n 's/^stackConfigDir: *//p' Pulumi.yaml)"
stacks="${stacks:-.}"
salts="$project/.e2e/salts"

export PULUMI_HOME="${PULUMI_HOME:-$project/.e2e/home}"
export PULUMI_BACKEND_URL="${PULUMI_BACKEND_URL:-file://$project/.e2e/state}"
export PULUMI_SKIP_UPDATE_CHECK=1 PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=1
export PULUMI_CONFIG_PASSPHRASE="${PULUMI_CONFIG_PASSPHRASE:-e2e-throwaway-passphrase}"
export VIRTUAL_ENV="$project/.venv"
export PATH="$bin:$project/.venv/bin:$PATH"
mkdir -p "$PULUMI_HOME"
case "$PULUMI_BACKEND_URL" in file://*) mkdir -p "${PULUMI_BACKEND_URL#file://}" ;; esac

python3 "$here/stack_salt.py" restore "$stacks" "$salts"
trap 'python3 "$here/stack_salt.py" stash "$stacks" "$salts"' EXIT
"$bin/pulumi" "$@"
