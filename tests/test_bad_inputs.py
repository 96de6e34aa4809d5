"""A corpus of broken stack files, and a fuzzer over the dev stack: never a traceback.

Each file in tests/bad_inputs/ names, in its first line `# expect: <path>`, the config path (or
the file itself) that its error must name.
"""

from __future__ import annotations

import codecs
import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aksray.runner import run_program
from aksray.stackfile import StackFileError
from tests.support.harness import cli, stack_document

CORPUS = sorted((Path(__file__).parent / "bad_inputs").glob("*.yaml"))


def _expected_path(file: Path) -> str:
    data = file.read_bytes()
    # Files in other encodings (the cases of encoding mistakes) still say what they expect.
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    first = data.decode("utf-16" if utf16 else "latin-1").splitlines()[0]
    assert first.startswith("# expect: "), f"{file.name} must start with '# expect: <path>'"
    return first[len("# expect: ") :].strip()


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 25


@pytest.mark.parametrize("file", CORPUS, ids=[f.stem for f in CORPUS])
def test_broken_stack_file_is_refused_cleanly(file: Path) -> None:
    expected = _expected_path(file)
    run = cli("plan", "--config", file)
    assert run.code == 1, run.output
    assert "Traceback" not in run.output and "internal error" not in run.output
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), run.stderr
    if ".yaml" in expected:  # a problem with the file itself, before any config key
        assert any(f"{expected}: " in line for line in lines), run.stderr
    else:
        assert any(line.startswith(f"error: {expected}: ") for line in lines), run.stderr
    try:
        result = run_program(file)
    except StackFileError:
        return  # the file never reached the program
    assert result.problems and result.resources == []


# ---- fuzzing: mutate the dev stack anywhere, in any way --------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            "a100",
            "cpu",
            "team-a",
            "default",
            "64Gi",
            "500m",
            "Standard_D8ds_v6",
            "existing",
            "aks",
            "inference",
            "",
            "1.35",
        ]
    ),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=8), children, max_size=3),
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def _mutated_dev(draw: st.DrawFn) -> dict[str, Any]:
    document = stack_document("dev")
    config = document["config"]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [p for p in _paths(config) if p]
        path = draw(st.sampled_from(paths))
        parent: Any = config
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=10))] = draw(_VALUES)
        else:
            parent.append(draw(_VALUES))
    return copy.deepcopy(document)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(document=_mutated_dev())
def test_fuzzed_dev_stack_never_crashes(tmp_path: Path, document: dict[str, Any]) -> None:
    stack = tmp_path / "Pulumi.fuzz.yaml"
    try:
        stack.write_text(yaml.safe_dump(document))
    except yaml.YAMLError:
        stack.write_text(json.dumps(document))
    run = cli("plan", "--config", stack)
    assert run.code in (0, 1), run.output
    assert "Traceback" not in run.output and "internal error" not in run.output, run.output
    lines = run.stderr.splitlines()
    # One line per finding: errors (exit 1) and warnings (exit 0) of the checks.
    assert all(line.startswith(("error: ", "warning: ")) for line in lines), run.stderr
    assert any(line.startswith("error: ") for line in lines) == (run.code == 1), run.stderr
