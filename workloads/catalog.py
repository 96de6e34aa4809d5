"""Every payload the platform knows, by its config key, and the files each one ships."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from workloads.aurora_finetune.spec import SPEC as AURORA_FINETUNE
from workloads.llm_serve.spec import SPEC as LLM_SERVE
from workloads.model_stage.spec import SPEC as MODEL_STAGE
from workloads.qwen_lora.spec import SPEC as QWEN_LORA
from workloads.spec import WorkloadSpec
from workloads.vllm_batch.spec import SPEC as VLLM_BATCH

WORKLOADS: Final[dict[str, WorkloadSpec]] = {
    spec.name: spec for spec in (AURORA_FINETUNE, QWEN_LORA, VLLM_BATCH, LLM_SERVE, MODEL_STAGE)
}

ROOT: Final = Path(__file__).resolve().parent
REQUIREMENTS_FILE: Final = "requirements.txt"
# Program-side files: they describe a payload to the platform and never run in a pod.
_PROGRAM_FILES: Final = frozenset({"spec.py"})


def _package_files(package: str) -> dict[str, str]:
    folder = ROOT / package
    return {
        f"workloads/{package}/{path.name}": path.read_text()
        for path in sorted(folder.iterdir())
        if path.is_file()
        and path.name not in _PROGRAM_FILES
        and (path.suffix == ".py" or path.name == REQUIREMENTS_FILE)
    }


def payload_files(spec: WorkloadSpec) -> dict[str, str]:
    """The files a payload's pods import, by path relative to the project root.

    The payload's own folder (without spec.py), the shared folders it imports, and
    `workloads/__init__.py`, so the pods import `workloads.<package>.<module>` exactly as the
    tests do.
    """
    files = {"workloads/__init__.py": (ROOT / "__init__.py").read_text()}
    for package in (spec.package, *spec.shared_packages):
        files.update(_package_files(package))
    return files


def requirements(spec: WorkloadSpec) -> tuple[str, ...]:
    """The payload's pinned runtime requirements (installed by Ray's runtime_env)."""
    path = ROOT / spec.package / REQUIREMENTS_FILE
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return tuple(line for line in lines if line)
