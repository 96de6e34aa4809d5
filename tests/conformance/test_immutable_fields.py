"""catalog/immutable_fields.py against the pinned CRDs: every transition rule (one that reads
`oldSelf`) of a kind the program creates is a refused update there, and nothing more.

Kueue's AdmissionCheck and Topology ship only in its chart's templated CRDs, read here with the
template actions blanked out."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from catalog.immutable_fields import REFUSED_UPDATES
from tests.support.crd_conformance import reference_rules
from tests.support.reference import chart

pytestmark = pytest.mark.reference

# Kinds the program never writes: Kueue creates Workloads, the platform runs no RayCronJob.
NOT_WRITTEN = frozenset({"Workload", "RayCronJob"})
CHART_ONLY = {"AdmissionCheck": "admissionchecks", "Topology": "topologies"}
_COMMENT = re.compile(r"\{\{-?\s*/\*.*?\*/\s*-?\}\}", re.DOTALL)
_ACTION_LINE = re.compile(r"^\s*\{\{.*\}\}\s*$", re.MULTILINE)
_ACTION = re.compile(r"\{\{.*?\}\}")


def _ours(kinds: set[str] | None = None) -> set[tuple[str, str, str]]:
    return {
        (u.kind, u.rule_at or u.path, u.message)
        for u in REFUSED_UPDATES
        if u.origin == "CRD" and (kinds is None or u.kind in kinds)
    }


def test_every_transition_rule_of_the_pinned_crds_and_only_those() -> None:
    found = {
        (r.kind, r.path, r.message)
        for r in reference_rules()
        if r.transition and r.kind not in NOT_WRITTEN
    }
    assert found == _ours() - _ours(set(CHART_ONLY))


def _transition_rules(node: Any, path: str) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    if not isinstance(node, dict):
        return found
    for rule in node.get("x-kubernetes-validations") or []:
        if "oldSelf" in rule.get("rule", ""):
            found.add((path, rule.get("message", "")))
    for key, child in (node.get("properties") or {}).items():
        found |= _transition_rules(child, f"{path}.{key}" if path else key)
    return found


@pytest.mark.parametrize("kind", sorted(CHART_ONLY))
def test_the_chart_only_kinds_rules_are_refused_updates(kind: str) -> None:
    path = chart("kueue") / "templates" / "crd" / f"kueue.x-k8s.io_{CHART_ONLY[kind]}.yaml"
    text = _ACTION.sub("x", _ACTION_LINE.sub("", _COMMENT.sub("", path.read_text())))
    document = yaml.safe_load(text)
    found = {
        (kind, where, message)
        for version in document["spec"]["versions"]
        for where, message in _transition_rules(version["schema"]["openAPIV3Schema"], "")
    }
    assert found == _ours({kind})
