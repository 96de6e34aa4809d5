"""How a kubeconfig signs in, as kubectl reads it: the current context's cluster and user, and a
credential plugin's token (AKS: `kubelogin get-token`). Used by the program's wait for the
deployer's access (components/deployer_access.py) and by `aksray verify`'s client."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from typing import Any


class CredentialError(Exception):
    """The kubeconfig has no usable context, or its credential plugin failed."""


def current_context(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cluster and user entries of the kubeconfig's current context."""
    contexts = {c["name"]: c["context"] for c in config.get("contexts") or []}
    name = config.get("current-context") or next(iter(contexts), None)
    if name not in contexts:
        raise CredentialError("the kubeconfig has no current context")
    context = contexts[name]
    clusters = {c["name"]: c["cluster"] for c in config.get("clusters") or []}
    users = {u["name"]: u.get("user") or {} for u in config.get("users") or []}
    return clusters[context["cluster"]], users.get(context.get("user", ""), {})


def exec_token(spec: Mapping[str, Any]) -> str:
    """Run the kubeconfig's credential plugin (kubelogin on AKS) for a bearer token."""
    env = dict(os.environ)
    env.update({e["name"]: e["value"] for e in spec.get("env") or []})
    done = subprocess.run(  # noqa: S603 - the kubeconfig's own credential plugin
        [spec["command"], *(spec.get("args") or [])],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise CredentialError(
            f"{spec['command']} (the kubeconfig's credential plugin) failed: "
            f"{done.stderr.strip()[-500:]}"
        )
    token = (json.loads(done.stdout).get("status") or {}).get("token")
    if not token:
        raise CredentialError(f"{spec['command']} returned no token")
    return str(token)
