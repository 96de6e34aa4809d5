"""A minimal stack that plans clean: each check's test breaks it in one way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aksray.offline.runner import RunResult, run_program
from tests.support.harness import P, write_stack


def minimal() -> dict[str, Any]:
    """One department, one team, one 1-GPU pool of 2 nodes, the endpoint without Blob."""
    return {
        "config": {
            P + "cluster": {
                "cpuPool": {"vmSize": "Standard_D8ds_v6", "minCount": 1, "maxCount": 2},
                "gpuPools": [{"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "maxCount": 2}],
            },
            P + "scheduling": {
                "departments": [
                    {
                        "name": "research",
                        "teams": [
                            {
                                "name": "team-a",
                                "quota": {
                                    "a100": {"gpu": 2},
                                    "cpu": {"cpu": 4, "memory": "16Gi"},
                                },
                            }
                        ],
                    }
                ]
            },
            P + "workloads": {
                "llm-serve": {
                    "enabled": True,
                    "team": "team-a",
                    "loraAdapter": False,
                    "modelSource": "huggingface",
                }
            },
        }
    }


def config(document: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = document["config"]
    return result


def teams(document: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = config(document)[P + "scheduling"]["departments"][0]["teams"]
    return result


def run(tmp_path: Path, document: dict[str, Any]) -> RunResult:
    result = run_program(write_stack(tmp_path, document))
    assert result.ok, result.problems
    return result
