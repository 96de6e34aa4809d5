"""The role-assignment condition evaluator (aksray/plan/model/abac.py), on the shapes of
Microsoft's own Blob examples ("Read or list blobs in named containers with a path"; the
evaluation rule of conditions-format.md: an action the condition does not target is allowed)."""

from __future__ import annotations

import pytest

from aksray.plan.model.abac import BlobRequest, ConditionError, parse_condition

C = "Microsoft.Storage/storageAccounts/blobServices/containers"
READ = f"{C}/blobs/read"
WRITE = f"{C}/blobs/write"
NAME = f"@Resource[{C}:name]"
PATH = f"@Resource[{C}/blobs:path]"
PREFIX = f"@Request[{C}/blobs:prefix]"

# Reading blobs under readonly/ of one container, and listing them only with that prefix.
NAMED_WITH_PATH = f"""
(
 (
  !(ActionMatches{{'{READ}'}} AND NOT SubOperationMatches{{'Blob.List'}})
 )
 OR
 (
  {NAME} StringEquals 'blobs-example-container'
  AND
  {PATH} StringStartsWith 'readonly/'
 )
)
AND
(
 (
  !(ActionMatches{{'{READ}'}} AND SubOperationMatches{{'Blob.List'}})
 )
 OR
 (
  {NAME} StringEquals 'blobs-example-container'
  AND
  {PREFIX} StringStartsWith 'readonly/'
 )
)
"""


def _read(container: str, path: str) -> BlobRequest:
    return BlobRequest(READ, {NAME: container, PATH: path})


def _list(container: str, prefix: str | None) -> BlobRequest:
    attributes = {NAME: container}
    if prefix is not None:
        attributes[PREFIX] = prefix
    return BlobRequest(READ, attributes, "Blob.List")


def test_microsofts_named_container_with_a_path() -> None:
    allows = parse_condition(NAMED_WITH_PATH)
    assert allows(_read("blobs-example-container", "readonly/a.txt"))
    assert not allows(_read("blobs-example-container", "private/a.txt"))
    assert not allows(_read("other", "readonly/a.txt"))
    assert allows(_list("blobs-example-container", "readonly/"))
    assert not allows(_list("blobs-example-container", "private/"))
    # A listing without a prefix (the portal's) lacks the attribute: refused, as the docs warn.
    assert not allows(_list("blobs-example-container", None))
    # An action the condition does not target is allowed (the role decides it).
    assert allows(BlobRequest(WRITE, {NAME: "other", PATH: "x"}))


def test_any_of_a_set_and_precedence() -> None:
    condition = (
        (
            f"(!(ActionMatches{{'{WRITE}'}})) OR {NAME} ForAnyOfAnyValues:StringEquals "
            "{'a', 'b'} OR ({NAME} StringEquals 'c' AND {PATH} StringStartsWith 'x/')"
        )
        .replace("{NAME}", NAME)
        .replace("{PATH}", PATH)
    )
    allows = parse_condition(condition)
    assert allows(BlobRequest(WRITE, {NAME: "a", PATH: "y"}))
    assert allows(BlobRequest(WRITE, {NAME: "b", PATH: "y"}))
    assert allows(BlobRequest(WRITE, {NAME: "c", PATH: "x/1"}))
    assert not allows(BlobRequest(WRITE, {NAME: "c", PATH: "y/1"}))
    assert not allows(BlobRequest(WRITE, {NAME: "ab", PATH: "y"}))


@pytest.mark.parametrize(
    "condition",
    [
        f"{NAME} StringLike 'a*'",  # an operator it does not read
        f"({NAME} StringEquals 'a'",  # unbalanced
        f"{NAME} StringEquals 'a' b",  # trailing text
        "@Environment[isPrivateLink] BoolEquals true",
    ],
)
def test_a_condition_outside_the_subset_is_refused(condition: str) -> None:
    with pytest.raises(ConditionError):
        parse_condition(condition)
