"""The `aksray verify` subcommand: a live cluster against the stack's plan (aksray/verify/)."""

from __future__ import annotations

import sys
from pathlib import Path

from aksray.cli.usage import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE
from aksray.live.kube import Kube, KubeError, credentials_from_kubeconfig
from aksray.offline.runner import RunResult
from aksray.plan.model.plan import plan
from aksray.verify.cluster import verify
from components.kube_credentials import CredentialError


def run(result: RunResult, kubeconfig: Path) -> int:
    """Print `drift:` and `note:` lines and a summary; 0 without drift."""
    try:
        kube = Kube(credentials_from_kubeconfig(kubeconfig, allow_exec=True))
        kube.get("/version")
    except (OSError, ValueError, KeyError, StopIteration, CredentialError, KubeError) as error:
        print(
            f"error: --kubeconfig: cannot reach the cluster of {kubeconfig}: {error}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    report = verify(plan(result), result, kube)
    for line in report.notes:
        print(f"note: {line}")
    for line in report.drifts:
        print(f"drift: {line}")
    verdict = (
        f"{len(report.drifts)} drift{'' if len(report.drifts) == 1 else 's'}"
        if report.drifts
        else "no drift"
    )
    print(
        f"verify: {report.checked} checks of stack {result.stack} against the cluster of "
        f"{kubeconfig}: {verdict}"
    )
    return EXIT_PROBLEMS if report.drifts else EXIT_OK
