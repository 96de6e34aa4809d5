"""A stack file reads as the Pulumi CLI reads it: each case against what the CLI passes.

What the CLI passes comes from the Pulumi source (Pulumi 3.260.0, the engine scripts/engine
builds), not from our own reading:

- pulumi/pulumi `sdk/go/common/workspace/loaders.go` `LoadProjectStackBytes`: the file is
  unmarshalled into plain Go values with gopkg.in/yaml.v3 (`sdk/go/common/encoding/marshal.go`),
  the config keys namespaced, the document marshalled back to YAML and unmarshalled again into
  config values; `checkForEmptyConfig` warns that a key with no value is passed as "";
- `sdk/go/common/resource/config/object.go` `unmarshalObject` / `MarshalString`: a scalar
  setting is passed as its text (a number as Go's encoding/json writes it, a time as Go prints
  it), a map or list as JSON (Go writes map keys sorted, compactly), a nested null as `null`;
- gopkg.in/yaml.v3 v3.0.1 `resolve.go` `resolve`: `strconv.ParseInt(s, 0, 64)` after removing
  `_` (so `010` is octal 8, `0x`/`0o`/`0b` prefixes work), then `ParseUint`, then a float;
  `.inf`/`.nan`; timestamps only untagged or `!!timestamp`; `decode.go`: merge keys (`<<`,
  plain or quoted, the map's own keys first, then the listed maps in order), `!!binary` decoded
  to its text, a tag on a map or list ignored, an explicit core tag that does not fit refused;
  `parser.anchor` overwrites an anchor's earlier definition (an alias takes the latest).

Each expected value below was also confirmed by running that Go code on the same file. Where the
engine is built (`scripts/engine/bootstrap.sh --print-bin-dir`), the last test asks the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT, run_program
from aksray.stackfile.reader import StackFileError, load_stack_config
from tests.support.harness import cli

P = "aks-ray-platform:"
ROOT = PROJECT_ROOT

# name -> (the `config:` body, what the CLI passes: key -> value).
PASSED: dict[str, tuple[str, dict[str, str]]] = {
    "leading-zero-octal": (
        f"  {P}cluster:\n    maxCount: 010\n    minCount: -010\n    h: 0x1F\n"
        f"    o: 0o17\n    b: 0B11\n    u: 1_000\n    f: 08\n  {P}top: 010\n",
        {
            P + "cluster": '{"b":3,"f":8,"h":31,"maxCount":8,"minCount":-8,"o":15,"u":1000}',
            P + "top": "8",
        },
    ),
    "key-with-no-value": (
        f"  {P}location:\n  {P}x: ~\n  {P}cluster:\n    maxCount:\n",
        {P + "location": "", P + "x": "", P + "cluster": '{"maxCount":null}'},
    ),
    "whole-floats-lose-the-point": (
        f"  {P}cluster:\n    maxCount: 5.0\n    r: 2.5\n    m: 1e6\n    p: 007.0\n"
        f"  {P}top: 5.0\n  {P}big: 1e6\n  {P}half: 2.50\n  {P}small: 1e-7\n  {P}huge: 1e22\n",
        {
            P + "cluster": '{"m":1000000,"maxCount":5,"p":7,"r":2.5}',
            P + "top": "5",
            P + "big": "1000000",
            P + "half": "2.5",
            P + "small": "1e-7",
            P + "huge": "1e+22",
        },
    ),
    "beyond-64-bits": (
        f"  {P}u: 18446744073709551615\n  {P}f: 1e400\n"
        f"  {P}cluster:\n    x: 18446744073709551615\n    y: 99999999999999999999\n",
        {
            P + "u": "18446744073709551615",
            P + "f": "1e400",
            P + "cluster": '{"x":18446744073709552000,"y":100000000000000000000}',
        },
    ),
    "redefined-anchor": (
        f"  {P}a: &x 1\n  {P}b: *x\n  {P}c: &x 2\n  {P}d: *x\n",
        {P + "a": "1", P + "b": "1", P + "c": "2", P + "d": "2"},
    ),
    "merge-keys": (
        f"  {P}shared: &shared {{a: 1, b: 2}}\n"
        f"  {P}cluster:\n    <<: *shared\n    b: 3\n"
        f"  {P}multi:\n    <<: [{{a: 1, b: 1}}, {{b: 2, c: 2}}]\n    c: 3\n"
        f'  {P}quoted:\n    "<<": {{a: 1}}\n',
        {
            P + "shared": '{"a":1,"b":2}',
            P + "cluster": '{"a":1,"b":3}',
            P + "multi": '{"a":1,"b":1,"c":3}',
            P + "quoted": '{"a":1}',
        },
    ),
    "tags": (
        f"  {P}location: !!binary ZWFzdHVzMg==\n"
        f"  {P}cluster:\n    s: !!set {{a, b}}\n    o: !!omap [{{a: 1}}, {{b: 2}}]\n"
        f'    t: !thing bar\n    u: !!str 10\n    v: !!float 1\n    y: !!int "12"\n'
        f"    z: !!timestamp 2024-01-01\n    w: !!binary /w==\n"
        f'  {P}bang: ! 010\n  {P}quoted: "010"\n  {P}block: |\n    010\n',
        {
            P + "location": "eastus2",
            P + "cluster": (
                '{"o":[{"a":1},{"b":2}],"s":{"a":null,"b":null},"t":"bar","u":"10","v":1,'
                '"w":"\ufffd","y":12,"z":"2024-01-01 00:00:00 +0000 UTC"}'
            ),
            P + "bang": "8",
            P + "quoted": "010",
            P + "block": "010\n",
        },
    ),
    "times-and-words": (
        f"  {P}date: 2024-01-01\n  {P}stamp: 2024-1-2t3:4:5.120Z\n"
        f"  {P}zoned: 2024-01-02T03:04:05+02:30\n  {P}notadate: 2024-02-30\n"
        f"  {P}cluster:\n    words: [yes, on, True, y, Off, Null, '~', 12:30, 1_, 0x]\n",
        {
            P + "date": "2024-01-01 00:00:00 +0000 UTC",
            P + "stamp": "2024-01-02 03:04:05.12 +0000 UTC",
            P + "zoned": "2024-01-02 03:04:05 +0230 +0230",
            P + "notadate": "2024-02-30",
            P + "cluster": '{"words":["yes","on",true,"y","Off",null,"~","12:30",1,"0x"]}',
        },
    ),
    "keys-inside-a-setting": (
        f"  {P}cluster:\n    1: a\n    true: b\n    ~: c\n    5.0: e\n    010: g\n"
        f"    zeta: {{b: 1, a: 2}}\n    html: '<a&b>'\n",
        {
            P + "cluster": (
                '{"1":"a","5":"e","8":"g","\\u003cnil\\u003e":"c",'
                '"html":"\\u003ca\\u0026b\\u003e","true":"b","zeta":{"a":2,"b":1}}'
            )
        },
    ),
    "empty-config": ("  {}\n", {}),
}

# name -> (the `config:` body, the config path the refusal names, words of its message).
REFUSED: dict[str, tuple[str, str, str]] = {
    "infinity": (f"  {P}cluster:\n    x: .inf\n", "cluster.x", "infinity and NaN cannot"),
    "nan": (f"  {P}x: .nan\n", "x", "infinity and NaN cannot"),
    "bool-tag-on-a-word": (f"  {P}b: !!bool yes\n", "b", "cannot be read as !!bool"),
    "int-tag-on-a-float": (f"  {P}c:\n    a: !!int 5.0\n", "c.a", "cannot be read as !!int"),
    "binary-not-base64": (f'  {P}b: !!binary "@@"\n', "b", "not base64"),
    "merge-of-a-scalar": (f"  {P}c:\n    <<: 1\n", "c", "a merge key (<<) takes a map"),
}


def _stack(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "Pulumi.cli.yaml"
    path.write_text(f"config:\n{body}")
    return path


@pytest.mark.parametrize("name", sorted(PASSED))
def test_each_value_is_what_the_cli_passes(tmp_path: Path, name: str) -> None:
    body, passed = PASSED[name]
    assert load_stack_config(_stack(tmp_path, body)).values == passed


def test_two_merge_keys_in_one_map_are_refused_like_any_key_given_twice(tmp_path: Path) -> None:
    with pytest.raises(StackFileError) as caught:
        load_stack_config(_stack(tmp_path, f"  {P}c:\n    <<: {{a: 1}}\n    <<: {{b: 1}}\n"))
    assert caught.value.message == (
        "at line 4, column 5: the key '<<' is given twice (first at line 3); keep one"
    )


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_the_cli_refuses_is_refused_at_its_path(tmp_path: Path, name: str) -> None:
    body, path, words = REFUSED[name]
    with pytest.raises(StackFileError) as caught:
        load_stack_config(_stack(tmp_path, body))
    assert caught.value.path == path
    assert words in caught.value.message
    assert caught.value.message.endswith(")")  # "(line N, column M)": where in the file


# ---- what the plan makes of them: the same as the program under `pulumi up` ------------------


def _dev_with(tmp_path: Path, edit: str, replace: str) -> Path:
    text = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    assert edit in text
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text.replace(edit, replace))
    return path


DEV_POOL = "{name: a100, vmSize: Standard_NC24ads_A100_v4, minCount: 0, maxCount: 5, spot: false}"


def test_a_pool_size_written_as_a_float_plans_as_the_whole_number(tmp_path: Path) -> None:
    run = cli("plan", "--config", _dev_with(tmp_path, "maxCount: 5,", "maxCount: 5.0,"))
    assert run.code == 0, run.stderr
    assert "0..5" in run.stdout


def test_a_leading_zero_is_octal_as_for_the_cli(tmp_path: Path) -> None:
    # 010 is 8 nodes: the team's 5 GPUs fit, and the plan shows 8, not 10.
    run = cli("plan", "--config", _dev_with(tmp_path, "maxCount: 5,", "maxCount: 010,"))
    assert run.code == 0, run.stderr
    pool = next(line for line in run.stdout.splitlines() if line.strip().startswith("a100 "))
    assert "0..8" in pool


def test_a_stack_built_with_merge_keys_plans_like_the_one_written_out(tmp_path: Path) -> None:
    merged = _dev_with(
        tmp_path,
        f"      - {DEV_POOL}",
        "      - <<: &a100 {name: a100, vmSize: Standard_NC24ads_A100_v4, minCount: 0}\n"
        "        maxCount: 5\n        spot: false",
    )
    plain = cli("plan", "--config", ROOT / "stacks" / "Pulumi.dev.yaml")
    run = cli("plan", "--config", merged)
    assert run.code == 0, run.stderr
    assert run.stdout == plain.stdout


def test_a_run_label_written_as_a_decimal_number_is_a_label(tmp_path: Path) -> None:
    stack = _dev_with(
        tmp_path,
        "qwen-lora: {enabled: true, team: team-a, priority: train, workers: 4}",
        "qwen-lora: {enabled: true, team: team-a, priority: train, workers: 4, run: 2.5}",
    )
    result = run_program(stack)
    assert result.ok, result.problems
    (qwen,) = [w for w in result.settings.enabled_workloads if w.name == "qwen-lora"]
    assert qwen.run == "2.5"  # what the program makes of JSON's 2.5 under `pulumi up` too
    assert any(r.type == "kubernetes:ray.io/v1:RayJob" for r in result.resources)


def test_binary_and_set_values_inside_a_section_are_refused_cleanly(tmp_path: Path) -> None:
    stack = _dev_with(tmp_path, "containers: [datasets, models]", "containers: !!set {datasets}")
    run = cli("plan", "--config", stack)
    assert run.code == 1
    assert run.stderr.splitlines() == [
        'error: storage.containers: must be a list, got {"datasets": null}'
    ]
    stack = _dev_with(tmp_path, 'kubernetesVersion: "1.35"', "kubernetesVersion: !!binary /w==")
    run = cli("plan", "--config", stack)
    assert run.code == 1
    assert run.stderr.startswith("error: cluster.kubernetesVersion: ")
    assert "b'" not in run.stderr and "Traceback" not in run.output


# ---- the real CLI, where the engine is built -----------------------------------------------------


def _engine_bin() -> Path | None:
    try:
        out = subprocess.run(
            [ROOT / "scripts" / "engine" / "bootstrap.sh", "--print-bin-dir"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    binary = Path(out) / "pulumi"
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


class _Cli:
    """A throw-away project and stack of the built engine; `config(body)` is what
    `pulumi config --json` shows for a stack file holding `body`."""

    def __init__(self, pulumi: Path, folder: Path) -> None:
        self.pulumi, self.folder = pulumi, folder
        (folder / "Pulumi.yaml").write_text("name: aks-ray-platform\nruntime: python\n")
        (folder / "state").mkdir()
        self.env = {
            **os.environ,
            "PULUMI_HOME": str(folder / "home"),
            "PULUMI_BACKEND_URL": f"file://{folder / 'state'}",
            "PULUMI_CONFIG_PASSPHRASE": "test-only",
            "PULUMI_SKIP_UPDATE_CHECK": "1",
        }
        self.run("stack", "init", "cli", "--secrets-provider", "passphrase", "--non-interactive")
        text = (folder / "Pulumi.cli.yaml").read_text()
        self.salt = [line for line in text.splitlines() if "encryptionsalt" in line]

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [self.pulumi, *args],
            check=False,
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def config(self, body: str) -> dict[str, Any]:
        (self.folder / "Pulumi.cli.yaml").write_text("\n".join([*self.salt, "config:", body]))
        result: dict[str, Any] = json.loads(self.run("config", "--json", "--show-secrets"))
        return result


def test_the_built_engine_passes_what_the_table_says(tmp_path: Path) -> None:
    pulumi = _engine_bin()
    if pulumi is None:
        pytest.skip("the Pulumi engine is not built (make engine)")
    engine = _Cli(pulumi, tmp_path)
    for name, (body, passed) in sorted(PASSED.items()):
        shown = engine.config(body)
        assert {key: entry["value"] for key, entry in shown.items()} == passed, name
