"""Apply a stack to the rig through the real Pulumi engine (tier T4's toolchain).

The stack runs as `cluster.mode: existing` against the rig's kubeconfig, from a throw-away
project folder whose Pulumi.yaml points `main` at this repository: the program is the very one
`pulumi up` runs for users, its stack file is generated, and nothing in the repository changes.
State lives in a file backend inside the run folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from aksray.rehearse.rig.processes import RigError, last_lines
from aksray.rehearse.rig.toolchain import REPO_ROOT, EngineToolchain

PASSPHRASE: Final = "aksray-rehearse-throwaway"  # noqa: S105 - a throw-away local state
UP_TIMEOUT_S: Final = 600


@dataclass
class EngineStack:
    engine: EngineToolchain
    run_dir: Path
    stack: str
    kubeconfig: Path
    python_bin: Path

    @property
    def project(self) -> Path:
        return self.run_dir / "project"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
        env.update(
            {
                "PULUMI_HOME": str(self.run_dir / "pulumi-home"),
                "PULUMI_BACKEND_URL": f"file://{self.run_dir / 'pulumi-state'}",
                "PULUMI_SKIP_UPDATE_CHECK": "1",
                "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "1",
                "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
                "PULUMI_SKIP_CONFIRMATIONS": "1",
                "KUBECONFIG": str(self.kubeconfig),
                # The language host runs `python3` from PATH: the project's environment first.
                "PATH": f"{self.engine.bin}:{self.python_bin}:{env.get('PATH', '')}",
                "VIRTUAL_ENV": str(self.python_bin.parent),
            }
        )
        return env

    def command(self, *args: str) -> list[str]:
        return [str(self.engine.bin / "pulumi"), *args, "--stack", self.stack, "--non-interactive"]

    def preview_command(self) -> list[str]:
        return self.command("preview")

    def _pulumi(self, *args: str, log: str, stdout: Path | None = None) -> float:
        """Run the engine; its output goes to the log (stdout alone to `stdout` when given)."""
        t0 = time.monotonic()
        out = self.run_dir / "logs" / f"pulumi-{log}.log"
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("ab") as handle, (stdout or out).open("ab") as printed:
            result = subprocess.run(  # noqa: S603 - the engine we built
                self.command(*args),
                cwd=self.project,
                env=self.env(),
                stdout=printed if stdout is not None else handle,
                stderr=handle if stdout is not None else subprocess.STDOUT,
                timeout=UP_TIMEOUT_S,
                check=False,
            )
        if result.returncode != 0:
            raise RigError(
                f"pulumi {' '.join(args)} failed; last lines of {out}:\n{last_lines(out, 25)}"
            )
        return time.monotonic() - t0

    def init(self) -> None:
        project = yaml.safe_load((REPO_ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))
        project["main"] = os.path.relpath(REPO_ROOT, self.project)
        project["stackConfigDir"] = "stacks"
        (self.project / "stacks").mkdir(parents=True, exist_ok=True)
        (self.project / "Pulumi.yaml").write_text(
            yaml.safe_dump(project, sort_keys=False), encoding="utf-8"
        )
        (self.run_dir / "pulumi-state").mkdir(parents=True, exist_ok=True)
        self.write_config({})
        self._pulumi("stack", "init", "--secrets-provider", "passphrase", log="init")

    def _stack_file(self) -> Path:
        return self.project / "stacks" / f"Pulumi.{self.stack}.yaml"

    def write_config(self, config: dict[str, Any]) -> None:
        path = self._stack_file()
        existing = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
        document = {k: v for k, v in (existing or {}).items() if k != "config"}  # keep the salt
        document["config"] = config
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")

    def up(self, config: dict[str, Any], step: str) -> float:
        """Write the stack's config and run `pulumi up`; seconds it took."""
        self.write_config(config)
        return self._pulumi("up", "--yes", "--skip-preview", log=f"up-{step}")

    def preview(self, config: dict[str, Any], step: str) -> str:
        """Write the stack's config and run `pulumi preview --json`: what the engine would do,
        as the JSON document it prints."""
        self.write_config(config)
        out = self.run_dir / "logs" / f"pulumi-preview-{step}.json"
        self._pulumi("preview", "--json", log=f"preview-{step}", stdout=out)
        return out.read_text(encoding="utf-8")

    def destroy(self) -> float:
        return self._pulumi("destroy", "--yes", "--skip-preview", log="destroy")

    def resources_left(self) -> list[str]:
        out = subprocess.run(  # noqa: S603
            [str(self.engine.bin / "pulumi"), "stack", "export", "--stack", self.stack],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            check=True,
            text=True,
        )
        resources = (json.loads(out.stdout).get("deployment") or {}).get("resources") or []
        return [r["urn"] for r in resources if r.get("type") != "pulumi:pulumi:Stack"]
