"""Figures the docs give that code holds: each is read back from where it comes from, so a
change there fails here until the doc says it again."""

from __future__ import annotations

import re

from aksray.offline.runner import PROJECT_ROOT
from catalog.quantities import parse_cpu_millis
from workloads.catalog import WORKLOADS


def _prose(name: str) -> str:
    return " ".join((PROJECT_ROOT / name).read_text(encoding="utf-8").split())


def test_troubleshooting_gives_the_cpus_qwen_lora_s_workers_ask_for() -> None:
    (group,) = WORKLOADS["qwen-lora"].workers
    asked = parse_cpu_millis(group.pod.cpu) // 1000
    found = re.search(
        r"\(the spec asks for (\d+): (\d+) and (\d+) for", _prose("docs/troubleshooting.md")
    )
    assert found, "docs/troubleshooting.md says what qwen-lora's spec asks for"
    assert int(found[1]) == asked == int(found[2]) + int(found[3])


# A version 1.7, not the end of a range such as `1.5-1.7` GiB.
_KUBERAY_17 = re.compile(r"(?<![\d.\-])\b(?:KubeRay )?v?1\.7(?:\.\d+)?(?!\.?\d)")


def test_kuberay_1_7_is_named_only_beside_the_shipped_1_6() -> None:
    """The platform ships KubeRay 1.6.2: a paragraph that reasons about 1.7 compares it with
    what ships, or it tells the reader about an operator they do not run."""
    texts = ["README.md", *(f"docs/{p.name}" for p in sorted((PROJECT_ROOT / "docs").glob("*.md")))]
    texts += [f"stacks/{p.name}" for p in sorted((PROJECT_ROOT / "stacks").glob("*.yaml"))]
    alone = []
    for name in texts:
        for paragraph in (PROJECT_ROOT / name).read_text(encoding="utf-8").split("\n\n"):
            flat = " ".join(paragraph.replace("#", " ").split())
            if "KubeRay" not in flat and "kuberay" not in flat:
                continue
            for found in _KUBERAY_17.finditer(flat):
                near = flat[max(0, found.start() - 300) : found.end() + 300]
                if "1.6" in near:
                    continue
                alone.append(f"{name}: ...{flat[max(0, found.start() - 60) : found.end() + 60]}...")
    assert alone == []


def test_the_upgrade_steps_name_the_rig_pins_and_the_reference_manifest_that_exist() -> None:
    text = _prose("docs/cluster-software.md")
    steps = text[text.index("**Upgrading an operator") :]
    pins = dict(
        line.split("=", 1)
        for line in (PROJECT_ROOT / "scripts/rig/versions.env").read_text().splitlines()
        if line and not line.startswith("#")
    )
    named = set(re.findall(r"`([A-Z_]+_VERSION)`", steps))
    assert named and named <= set(pins)
    assert {"KUEUE_VERSION", "KUBERAY_VERSION", "KAI_VERSION"} <= named
    for path in re.findall(r"`((?:scripts|catalog)/[\w/.]+)`", steps):
        assert (PROJECT_ROOT / path).is_file(), path
    assert "make reference" in steps and "make rig" in steps and "make rehearse-test" in steps


def test_the_e2e_compares_as_many_objects_as_render_writes_for_local() -> None:
    found = re.search(
        r"compares the (\d+) objects `aksray render --stack local` writes",
        _prose("docs/development.md"),
    )
    assert found, "docs/development.md says how many objects make e2e compares"
    golden = PROJECT_ROOT / "tests" / "golden" / "local" / "render" / "kubernetes"
    assert int(found[1]) == len(list(golden.glob("*.yaml")))
