"""`operators`: whether the stack installs the four operators, from where, and their optional
features."""

from __future__ import annotations

import re
from typing import Final

from catalog.kai import KAI_ACTIONS, PLACING_ACTION
from catalog.versions import CHART_SOURCES, ChartSource
from settings.defaults import (
    DEFAULT_CHART_SOURCE,
    DEFAULT_GPU_SHARING,
    DEFAULT_KAI_ACTIONS,
    DEFAULT_OPERATORS_INSTALL,
)
from settings.errors import Problem
from settings.model import ClusterSettings, OperatorSettings
from settings.reader import Section, describe, join

OPERATOR_KEYS: Final = (
    "install",
    "metrics",
    "gpuSharing",
    "kaiActions",
    "chartSource",
    "kuberayServiceAccount",
)
# `<namespace>/<name>`: DNS-1123 labels, as Kubernetes names a namespace and a service account.
_SERVICE_ACCOUNT = re.compile(
    r"^(?=.{1,63}/)[a-z0-9]([-a-z0-9]*[a-z0-9])?/(?=.{1,253}\Z)[a-z0-9]([-.a-z0-9]*[a-z0-9])?\Z"
)


def parse_operators(
    raw: Section | None, problems: list[Problem], cluster: ClusterSettings
) -> OperatorSettings:
    section = raw or Section({}, "operators", problems, OPERATOR_KEYS)
    install = section.boolean("install", DEFAULT_OPERATORS_INSTALL)
    if install and cluster.render_yaml_to:
        # A Helm release is installed by the provider talking to the cluster itself; it is never
        # written to the render directory, so a render-only stack would install into whatever
        # cluster the kube context reaches (or fail without one).
        section.problem(
            join(section.path, "install"),
            "must be false when cluster.renderYamlTo is set: Helm releases cannot be rendered "
            "to YAML; set `operators: {install: false}` (the cluster must run the operators)",
        )
    if section.has("metrics"):
        # Kept among the known keys so that a stack which still sets it learns where it went.
        section.problem(
            join(section.path, "metrics"),
            "moved to observability.enabled: the charts' own ServiceMonitors "
            "(monitoring.coreos.com) have no CRD on a cluster this stack creates, and AKS's "
            "managed Prometheus never reads them; remove operators.metrics and set "
            "observability.enabled: true (docs/monitoring.md)",
        )
    return OperatorSettings(
        gpu_sharing=section.boolean("gpuSharing", DEFAULT_GPU_SHARING),
        install=install,
        kai_actions=_kai_actions(section, install=install),
        chart_source=_chart_source(section, install=install),
        kuberay_service_account=_kuberay_service_account(section, install=install),
    )


def _kuberay_service_account(section: Section, *, install: bool) -> str | None:
    """`kuberayServiceAccount`: `<namespace>/<name>` of the service account an existing
    cluster's KubeRay operator runs as, the one identity the admission policies let create GPU
    pods in team namespaces; None: not declared (the chart's default, and the plan warns)."""
    key = "kuberayServiceAccount"
    if not section.has(key):
        return None
    if install:
        section.problem(
            join(section.path, key),
            "is only for operators.install: false (a cluster that runs its own KubeRay); the "
            "stack's release runs as kuberay-system/kuberay-operator: leave it out",
        )
        return None
    value = section.string(
        key,
        pattern=_SERVICE_ACCOUNT,
        hint="<namespace>/<service account> the cluster's KubeRay operator runs as, e.g. "
        "kuberay-system/kuberay-operator",
    )
    return value or None


def _chart_source(section: Section, *, install: bool) -> ChartSource:
    """`chartSource`: whose builds of KubeRay and Kueue the stack installs."""
    chosen = section.literal("chartSource", CHART_SOURCES, DEFAULT_CHART_SOURCE)
    if section.has("chartSource") and not install:
        # Nothing is installed, so a source would be silently ignored.
        section.problem(
            join(section.path, "chartSource"),
            "is only for operators.install: true (the stack installs nothing here, so it "
            "installs from nowhere): leave chartSource out",
        )
    return chosen


def _kai_actions(section: Section, *, install: bool) -> tuple[str, ...] | None:
    """`kaiActions`: what an existing cluster's KAI scheduler runs (its SchedulingShard's enabled
    actions). Whether that list keeps KAI from evicting is the planner's check; here only the
    names, since a misspelt action name would hide the real one."""
    path = join(section.path, "kaiActions")
    if not section.has("kaiActions"):
        return DEFAULT_KAI_ACTIONS
    if install:
        section.problem(
            path,
            "is only for operators.install: false (a cluster that runs its own KAI); the "
            f"stack's KAI release runs {PLACING_ACTION} alone: leave kaiActions out",
        )
        return DEFAULT_KAI_ACTIONS
    actions: list[str] = []
    problems = len(section.problems)
    for entry_path, name in section.items("kaiActions"):
        if not isinstance(name, str) or name not in KAI_ACTIONS:
            section.problem(
                entry_path,
                f"{describe(name)} is not a KAI scheduler action; KAI v0.17.0 has "
                f"{', '.join(KAI_ACTIONS)}",
            )
        elif name in actions:
            section.problem(entry_path, f"duplicate action {name!r}")
        else:
            actions.append(name)
    if not actions and len(section.problems) == problems:
        section.problem(
            path,
            f"must not be empty: with no actions KAI's scheduler runs all five; a cluster "
            f"whose KAI only places runs [{PLACING_ACTION}]",
        )
    return tuple(actions)
