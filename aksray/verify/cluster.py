"""Read a live cluster and say, one line each, where it differs from the plan.

A drift is a difference that breaks what the plan rests on: a controller at another version, KAI
running another action than the plan's (KAI evicting behind Kueue), Kueue configured otherwise,
a queue, flavor, priority class, admission check or admission policy missing, changed or not
active. A note is what is worth knowing and is not a drift: a difference the rehearsal rig
declares on what it stands in for (compare.RIG_DIFFERS_ANNOTATION), or what the stack does not
say (KAI's actions on a cluster whose KAI it does not know).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from aksray.live.kube import Discovery, Kube, KubeError
from aksray.offline.runner import RunResult
from aksray.plan.model.plan import Plan
from aksray.verify.compare import differences, explained, inactive, rig_differs
from aksray.verify.expected import (
    KAI_CONFIG_MAP,
    KUEUE_CONFIG_MAP,
    VERIFIED_KINDS,
    Controller,
    StackObject,
    controllers,
    kai_actions,
    kueue_settings,
    stack_objects,
)
from catalog.versions import CHART_SETS


@dataclass
class Report:
    drifts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: int = 0

    def drift(self, what: str, message: str) -> None:
        self.drifts.append(f"{what}: {message}")

    def note(self, what: str, message: str) -> None:
        self.notes.append(f"{what}: {message}")

    def differs(self, what: str, path: str, message: str, differs: Mapping[str, str]) -> None:
        """A drift, or a note where the rig declared the difference its own."""
        why = explained(path, differs)
        if why is None:
            self.drift(what, f"{path} {message}")
        else:
            self.note(what, f"{path} {message} (the rehearsal rig's own: {why})")


def verify(plan: Plan, result: RunResult, kube: Kube) -> Report:
    report = Report()
    if plan.settings.multikueue is not None:
        report.note(
            "multikueue",
            "the manager cluster is verified (its queues and admission checks); the workers' "
            "clusters are not",
        )
    for controller in controllers(plan):
        _version(kube, controller, report)
    _kai_actions(plan, kube, report)
    _kueue_configuration(plan, kube, report)
    discovery = Discovery(kube)
    for obj in stack_objects(result):
        _stack_object(kube, discovery, obj, report)
    return report


def _image_tag(deployment: Mapping[str, Any]) -> str:
    containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "containers"
    ) or [{}]
    image = str(containers[0].get("image", "")).split("@", 1)[0]
    return image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else "latest"


def _version(kube: Kube, controller: Controller, report: Report) -> None:
    report.checked += 1
    path = f"/apis/apps/v1/namespaces/{controller.namespace}/deployments/{controller.deployment}"
    what = f"{controller.name} ({controller.namespace}/{controller.deployment})"
    deployment = kube.get_or_none(path)
    if deployment is None:
        report.drift(what, f"no such Deployment: the plan rests on {controller.name} "
                           f"{controller.version}")  # fmt: skip
        return
    running = _image_tag(deployment)
    if running != controller.version:
        report.differs(
            what, "version", f"is {running}, the plan says {controller.version}",
            rig_differs(deployment),
        )  # fmt: skip


def _config_map(
    kube: Kube, report: Report, namespace: str, where: tuple[str, str]
) -> tuple[Any, dict[str, str]]:
    """The parsed YAML under a ConfigMap's key (None when absent), and its rig notes."""
    report.checked += 1
    name, key = where
    config_map = kube.get_or_none(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
    text = ((config_map or {}).get("data") or {}).get(key)
    return (yaml.safe_load(text) if text else None), rig_differs(config_map)


def _kai_actions(plan: Plan, kube: Kube, report: Report) -> None:
    namespace = CHART_SETS[plan.settings.operators.chart_source].kai.namespace
    what = f"KAI's actions (ConfigMap {namespace}/{KAI_CONFIG_MAP[0]}, {KAI_CONFIG_MAP[1]})"
    config, _ = _config_map(kube, report, namespace, KAI_CONFIG_MAP)
    if not isinstance(config, Mapping) or not isinstance(config.get("actions"), str):
        report.drift(what, "not found: the scheduler's configuration cannot be read")
        return
    running = tuple(a.strip() for a in config["actions"].split(",") if a.strip())
    expected = kai_actions(plan)
    if expected is None:
        report.note(what, f"{', '.join(running)}; the stack does not say (operators.kaiActions)")
    elif running != expected:
        report.drift(
            what,
            f"the scheduler runs {', '.join(running)}, the plan says {', '.join(expected)}: "
            "any action besides allocate evicts pods Kueue admitted",
        )


def _kueue_configuration(plan: Plan, kube: Kube, report: Report) -> None:
    namespace = CHART_SETS[plan.settings.operators.chart_source].kueue.namespace
    what = f"Kueue's configuration (ConfigMap {namespace}/{KUEUE_CONFIG_MAP[0]})"
    config, differs = _config_map(kube, report, namespace, KUEUE_CONFIG_MAP)
    if not isinstance(config, Mapping):
        report.drift(what, "not found")
        return
    for path, message in differences(kueue_settings(plan), config):
        report.differs(what, path, message, differs)


def _stack_object(kube: Kube, discovery: Discovery, obj: StackObject, report: Report) -> None:
    report.checked += 1
    try:
        path = discovery.path(obj.api_version, obj.kind, obj.name, obj.namespace)
    except KubeError as error:
        report.drift(str(obj), f"cannot be read ({error})")
        return
    if path is None:
        report.drift(str(obj), f"the cluster serves no {obj.api_version} {obj.kind}")
        return
    live = kube.get_or_none(path)
    if live is None:
        report.drift(str(obj), "is missing")
        return
    declared = {
        k: v for k, v in obj.declared.items() if k not in ("apiVersion", "kind", "metadata")
    }
    for where, message in differences(declared, live):
        report.drift(str(obj), f"{where} {message}")
    if VERIFIED_KINDS[obj.kind]:
        reason = inactive(live)
        if reason is not None:
            report.drift(str(obj), reason)
