"""Tier T5: the first `pulumi up` waits until the API server authorizes the deployer
(components/deployer_access.py), through the real engine against the rig's real API server.

A ServiceAccount stands for the deployer; its kubeconfig signs in through an exec credential
plugin, as AKS's (`kubelogin get-token`) does. `pulumi up` of a program holding only the wait
starts while the account may do nothing; a ClusterRoleBinding to cluster-admin, created
GRANT_AFTER_S later, stands for Azure RBAC finally honouring the role assignment. The update
must succeed, having asked more than once and waited at least that long; a second `pulumi up`
must not wait again.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT
from aksray.rehearse.rig.engine import PASSPHRASE
from aksray.rehearse.rig.prerequisites import engine_toolchain
from components.deployer_access import POLL_INTERVAL_S

pytestmark = [pytest.mark.rehearsal, pytest.mark.reference]

GRANT_AFTER_S: Final = 25.0
PROGRAM: Final = PROJECT_ROOT / "tests" / "rehearse" / "programs" / "deployer_access"
DEPLOYER: Final = "deployer"
NAMESPACE: Final = "kube-system"


@pytest.fixture(scope="module")
def plane() -> Any:
    from aksray.rehearse.rig.bringup import start_rig
    from aksray.rehearse.rig.controlplane import remove_run_data, rig_run_dir
    from aksray.rehearse.rig.prerequisites import rig_toolchain
    from manifests.helm_values import kueue_manager_config
    from settings.model import PodsReady

    run_dir = rig_run_dir()
    rig = start_rig(
        rig_toolchain(), run_dir, kueue_manager_config(metrics=False, pods_ready=PodsReady(45, 3))
    )
    yield rig
    rig.stop()
    remove_run_data(run_dir)


def _deployer_kubeconfig(plane: Any, folder: Path) -> Path:
    """The rig's server and CA; a ServiceAccount's token handed out by an exec plugin."""
    kube = plane.kube
    accounts = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts"
    kube.create(
        accounts, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEPLOYER}}
    )
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    token = kube.request("POST", f"{accounts}/{DEPLOYER}/token", request)["status"]["token"]
    rig = yaml.safe_load(Path(plane.kubeconfig).read_text())
    cluster = dict(rig["clusters"][0]["cluster"])
    if "certificate-authority" in cluster:
        ca = Path(cluster.pop("certificate-authority")).read_bytes()
        cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": token},
    }
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "rig", "cluster": cluster}],
        "users": [
            {
                "name": DEPLOYER,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": sys.executable,
                        "args": ["-c", f"print({json.dumps(json.dumps(credential))})"],
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
        "contexts": [{"name": "rig", "context": {"cluster": "rig", "user": DEPLOYER}}],
        "current-context": "rig",
    }
    path = folder / "deployer.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def _grant(plane: Any) -> None:
    plane.kube.create(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "aksray-test-deployer-admin"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "ServiceAccount", "name": DEPLOYER, "namespace": NAMESPACE}],
        },
    )


class _Project:
    """A throw-away project running PROGRAM with the real engine and a file backend."""

    def __init__(self, folder: Path, kubeconfig: Path) -> None:
        self.folder = folder
        folder.mkdir()
        python = Path(sys.executable).parent
        project = {
            "name": "deployer-access-test",
            # The project's own environment, as the platform's program runs in it.
            "runtime": {"name": "python", "options": {"virtualenv": str(python.parent)}},
            "main": os.path.relpath(PROGRAM, folder),
        }
        (folder / "Pulumi.yaml").write_text(yaml.safe_dump(project))
        (folder / "state").mkdir()
        bin_dir = engine_toolchain().bin
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
        self.env.update(
            PULUMI_HOME=str(folder / "home"),
            PULUMI_BACKEND_URL=f"file://{folder / 'state'}",
            PULUMI_SKIP_UPDATE_CHECK="1",
            PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION="1",
            PULUMI_CONFIG_PASSPHRASE=PASSPHRASE,
            PATH=f"{bin_dir}:{python}:{os.environ.get('PATH', '')}",
            VIRTUAL_ENV=str(python.parent),
        )
        self.pulumi = str(bin_dir / "pulumi")
        self.run("stack", "init", "test")
        self.run("config", "set", "kubeconfigPath", str(kubeconfig))
        self.run("config", "set", "roleAssignment", "/subscriptions/s/roleAssignments/a")

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.pulumi, *args, "--non-interactive"],
            cwd=self.folder, env=self.env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
        return done

    def outputs(self) -> dict[str, Any]:
        out = self.run("stack", "output", "--json", "--show-secrets").stdout
        return dict(json.loads(out))


def test_the_first_up_waits_for_the_deployers_access_and_the_next_does_not(
    plane: Any, tmp_path: Path
) -> None:
    kubeconfig = _deployer_kubeconfig(plane, tmp_path)
    project = _Project(tmp_path / "project", kubeconfig)
    granted_at: list[float] = []

    def grant() -> None:
        _grant(plane)
        granted_at.append(time.monotonic())

    timer = threading.Timer(GRANT_AFTER_S, grant)
    started = time.monotonic()
    timer.start()
    try:
        project.run("up", "--yes", "--skip-preview")
    finally:
        timer.cancel()
    took = time.monotonic() - started
    assert granted_at, "pulumi up finished before the deployer was granted anything"
    outputs = project.outputs()
    # Asked, refused, waited POLL_INTERVAL_S, asked again... until the grant (the engine's own
    # start takes a few of the GRANT_AFTER_S seconds, so the wait itself is somewhat shorter).
    assert outputs["accessReviews"] >= 2
    assert outputs["waitedSeconds"] >= POLL_INTERVAL_S
    assert took >= GRANT_AFTER_S
    # Authorized, a second up changes nothing and does not ask again.
    again = project.run("up", "--yes", "--skip-preview")
    assert "unchanged" in again.stdout
    assert project.outputs()["accessReviews"] == outputs["accessReviews"]
    project.run("destroy", "--yes", "--skip-preview")
    print(f"first up {took:.1f}s: {outputs}")
