"""The validator on a synthetic CRD: schema semantics no reference CRD uses, and the CEL library."""

from __future__ import annotations

import pytest

from tests.support.crd.conformance import (
    KUBERNETES_FUNCTIONS,
    escape_property,
    parse_quantity,
    validate_with,
)
from tests.support.crd.objects import synthetic_crd, synthetic_object


def test_embedded_resources_need_apiversion_and_kind_and_plain_metadata() -> None:
    crd = synthetic_crd(
        {
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        }
    )
    good = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"any": 1}}
    assert validate_with(crd, synthetic_object({"template": good})) == []
    errors = validate_with(crd, synthetic_object({"template": {"metadata": {"uid": "u"}}}))
    assert "Thing t: spec.template: 'apiVersion' is a required property" in errors
    assert "Thing t: spec.template: 'kind' is a required property" in errors
    assert any(e.startswith("Thing t: spec.template.metadata.uid: unknown field") for e in errors)


def test_preserve_unknown_fields_keeps_unknown_fields() -> None:
    crd = synthetic_crd({"free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}})
    assert validate_with(crd, synthetic_object({"free": {"anything": {"at": "all"}}})) == []
    assert validate_with(crd, synthetic_object({"other": 1}))[0].startswith(
        "Thing t: spec.other: unknown"
    )


def test_nullable_formats_and_sets() -> None:
    crd = synthetic_crd(
        {
            "maybe": {"type": "string", "nullable": True},
            "small": {"type": "integer", "format": "int32"},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        }
    )
    good = {"maybe": None, "small": 2**31 - 1, "when": "2026-01-02T03:04:05Z", "tags": ["a", "b"]}
    assert validate_with(crd, synthetic_object(good)) == []
    errors = validate_with(
        crd, synthetic_object({"small": 2**31, "when": "2026-13-02T03:04:05Z", "tags": ["a", "a"]})
    )
    assert errors == [
        "Thing t: spec.small: 2147483648 is not a 'int32'",
        "Thing t: spec.when: '2026-13-02T03:04:05Z' is not a 'date-time'",
        "Thing t: spec.tags[1]: duplicate entry 'a' in a set-type list",
    ]


def test_defaults_are_applied_before_rules_run() -> None:
    crd = synthetic_crd(
        {"mode": {"type": "string", "default": "Auto"}},
        rules=[{"rule": "self.mode == 'Auto'", "message": "mode must be Auto"}],
    )
    assert validate_with(crd, synthetic_object({})) == []
    assert validate_with(crd, synthetic_object({"mode": "Manual"})) == [
        "Thing t: spec: mode must be Auto (rule: self.mode == 'Auto')"
    ]


def test_escaped_property_names_and_message_expressions() -> None:
    assert escape_property("namespace") == "__namespace__"
    assert escape_property("a-b.c/d__e") == "a__dash__b__dot__c__slash__d__underscores__e"
    assert escape_property("has space") is None
    crd = synthetic_crd(
        {"namespace": {"type": "string"}, "max-size": {"type": "integer"}},
        rules=[
            {
                "rule": "self.__namespace__ != 'default' && self.max__dash__size < 10",
                "messageExpression": "'bad: ' + self.__namespace__",
            }
        ],
    )
    assert validate_with(crd, synthetic_object({"namespace": "ns", "max-size": 3})) == []
    errors = validate_with(crd, synthetic_object({"namespace": "default", "max-size": 3}))
    assert errors[0].startswith("Thing t: spec: bad: default (rule:")


def test_the_quantity_library() -> None:
    assert parse_quantity("1.5Gi") == 1.5 * 1024**3
    assert parse_quantity("500m") * 2 == 1
    assert parse_quantity("1e3") == 1000
    assert sorted(KUBERNETES_FUNCTIONS) == sorted(
        [
            "quantity",
            "isQuantity",
            "sign",
            "isInteger",
            "asInteger",
            "asApproximateFloat",
            "add",
            "sub",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
        ]
    )
    rules = [
        "quantity(self.limit).isGreaterThan(quantity(self.request))",
        "quantity(self.request).isLessThan(quantity(self.limit))",
        "quantity(self.limit).compareTo(quantity(self.request)) == 1",
        "quantity(self.limit).sub(quantity(self.request)).sign() == 1",
        "quantity(self.request).add(1).isGreaterThan(quantity('1'))",
        "quantity(self.limit).isInteger() && quantity(self.limit).asInteger() > 1000",
        "quantity(self.request).asApproximateFloat() < 1.0",
        "isQuantity(self.limit) && !isQuantity('ten')",
    ]
    crd = synthetic_crd(
        {"limit": {"type": "string"}, "request": {"type": "string"}},
        rules=[{"rule": rule} for rule in rules],
    )
    assert validate_with(crd, synthetic_object({"limit": "2Ki", "request": "500m"})) == []
    errors = validate_with(crd, synthetic_object({"limit": "100m", "request": "500m"}))
    assert [e.split("(rule: ", 1)[1][:-1] for e in errors] == [
        rules[0],
        rules[1],
        rules[2],
        rules[3],
        rules[5],
    ]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("self.x.matchesGlob('*')", "uses CEL functions this validator does not implement"),
        ("url(self.x).getHost() == 'a'", "uses CEL functions this validator does not implement"),
        ("self.x ==", "does not compile"),
        ("self.missing == 'a'", "could not be evaluated"),
        ("self.x", "not a bool"),
    ],
)
def test_a_rule_that_cannot_be_evaluated_fails_and_names_the_rule(rule: str, expected: str) -> None:
    crd = synthetic_crd({"x": {"type": "string"}}, rules=[{"rule": rule}])
    errors = validate_with(crd, synthetic_object({"x": "a"}))
    assert len(errors) == 1
    assert errors[0].startswith("Thing t: spec: ")
    assert expected in errors[0]
    assert repr(rule) in errors[0] or f"(rule: {rule})" in errors[0]


def test_optional_old_self_is_refused_not_skipped() -> None:
    crd = synthetic_crd(
        {"x": {"type": "string"}},
        rules=[{"rule": "oldSelf.hasValue()", "optionalOldSelf": True}],
    )
    assert "optionalOldSelf" in validate_with(crd, synthetic_object({"x": "a"}))[0]


def test_status_is_refused_where_a_status_subresource_exists() -> None:
    crd = synthetic_crd({}, subresources={"status": {}})
    assert validate_with(crd, {**synthetic_object({}), "status": {}}) == [
        "Thing t: status: is written by the controller; the API ignores it here"
    ]
