"""One CA and one certificate for every rig component, as kwokctl does it.

The admin certificate (O=system:masters) is the apiserver's serving certificate, every
controller's client certificate but KubeRay's, Kueue's webhook and metrics certificate, and its
key signs service-account tokens. The KubeRay operator signs in with a client certificate of its
own (`client_certificate`) whose user is the one it has in a cluster, its service account's, so
the admission policies that let only KubeRay create GPU pods in team namespaces see on the rig
the user they see on AKS. Made with the `openssl` command, so no crypto library is needed.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SERVING_NAMES: Final = (
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
    "DNS:localhost",
    "IP:127.0.0.1",
    "IP:::1",
)


@dataclass(frozen=True)
class Pki:
    ca_cert: Path
    ca_key: Path
    cert: Path
    key: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)  # noqa: S603,S607


def make_pki(directory: Path) -> Pki:
    """Write ca.crt/ca.key and admin.crt/admin.key into `directory` (created)."""
    directory.mkdir(parents=True, exist_ok=True)
    # Extensions a strict verifier (Python 3.13's default) requires of a CA and of a leaf.
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650",
        "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=aksray-rehearse-ca",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-addext", "subjectKeyIdentifier=hash",
        cwd=directory,
    )  # fmt: skip
    extensions = directory / "admin.ext"
    extensions.write_text(
        "basicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth,clientAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid,issuer\n"
        f"subjectAltName={','.join(SERVING_NAMES)}\n",
        encoding="utf-8",
    )
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "admin.key", "-out", "admin.csr",
        "-subj", "/O=system:masters/CN=aksray-rehearse-admin",
        cwd=directory,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", "admin.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "3650", "-out", "admin.crt", "-extfile", "admin.ext",
        cwd=directory,
    )  # fmt: skip
    return Pki(
        directory / "ca.crt", directory / "ca.key", directory / "admin.crt", directory / "admin.key"
    )


def client_certificate(pki: Pki, name: str, user: str, groups: tuple[str, ...]) -> Pki:
    """A client certificate for `user` in `groups`, signed by the rig's CA, written beside the
    admin's as `<name>.crt`/`<name>.key`; the same CA, with it in place of the admin's."""
    directory = pki.cert.parent
    (directory / f"{name}.ext").write_text(
        "basicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=clientAuth\n",
        encoding="utf-8",
    )
    subject = "".join(f"/O={group}" for group in groups) + f"/CN={user}"
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
        "-subj", subject,
        cwd=directory,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "3650", "-out", f"{name}.crt", "-extfile", f"{name}.ext",
        cwd=directory,
    )  # fmt: skip
    return Pki(pki.ca_cert, pki.ca_key, directory / f"{name}.crt", directory / f"{name}.key")
