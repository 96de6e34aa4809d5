"""Reading a stack file into config values: `secure:` ciphertext and settings given twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from aksray.stackfile.reader import SECRET_STAND_IN, StackFileError, load_stack_config

TOKEN = "aks-ray-platform:huggingfaceToken"


def _config(tmp_path: Path, body: str) -> dict[str, str]:
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(f"config:\n{body}")
    return load_stack_config(stack).values


@pytest.mark.parametrize(
    "ciphertext",
    [
        "v1:3yTv3SrbZMq+UhsM:Ks/Ssed1wYOYOTcbIZKprA==",  # the passphrase provider's form
        "AAABAAEClmdMt3bs5CWPUuXm+PBzVl9Y0Wm0RFCS6cBE3a6i",  # a cloud or service provider's
    ],
)
def test_ciphertext_under_secure_is_a_secret(tmp_path: Path, ciphertext: str) -> None:
    values = _config(tmp_path, f"  {TOKEN}: {{secure: '{ciphertext}'}}\n")
    assert values[TOKEN] == SECRET_STAND_IN


@pytest.mark.parametrize(
    "pasted", ["hf_abcdefabcdefabcdefabcdef", "v1:not base64:x", "short", "v1:abc"]
)
def test_plain_text_under_secure_is_refused(tmp_path: Path, pasted: str) -> None:
    with pytest.raises(StackFileError) as caught:
        _config(tmp_path, f"  {TOKEN}: {{secure: '{pasted}'}}\n")
    assert caught.value.path == "huggingfaceToken"
    assert "is not Pulumi ciphertext" in caught.value.message


def test_the_same_setting_namespaced_and_bare_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StackFileError) as caught:
        _config(tmp_path, "  location: westeurope\n  aks-ray-platform:location: eastus2\n")
    assert caught.value.path == "location"
    assert caught.value.message == (
        "is set twice, as `location` and as `aks-ray-platform:location`, and only one would "
        "count; keep one"
    )


def test_a_provider_setting_is_not_the_project_setting(tmp_path: Path) -> None:
    values = _config(tmp_path, "  location: eastus2\n  azure-native:location: eastus2\n")
    assert values == {"aks-ray-platform:location": "eastus2", "azure-native:location": "eastus2"}
