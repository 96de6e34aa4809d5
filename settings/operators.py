"""`operators`: whether the stack installs the four operators, and their optional features."""

from __future__ import annotations

from typing import Final

from settings.defaults import DEFAULT_GPU_SHARING, DEFAULT_METRICS, DEFAULT_OPERATORS_INSTALL
from settings.errors import Problem
from settings.model import ClusterSettings, OperatorSettings
from settings.reader import Section, join

OPERATOR_KEYS: Final = ("install", "metrics", "gpuSharing")


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
    return OperatorSettings(
        metrics=section.boolean("metrics", DEFAULT_METRICS),
        gpu_sharing=section.boolean("gpuSharing", DEFAULT_GPU_SHARING),
        install=install,
    )
