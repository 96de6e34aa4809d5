"""How aurora-finetune builds and prepares its model, through a fake `aurora` library (the
default environment has neither torch nor Aurora; the payload tier trains the real model).

Aurora's fine-tuning guide: the pretrained model computes gradients on an 80 GB A100 only with
`autocast=True` and `configure_activation_checkpointing()`.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from workloads.aurora_finetune import main as aurora


class _Parameter:
    requires_grad = True


class _FakeAurora:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.autocast = kwargs.get("autocast", False)
        self.calls: list[str] = []
        self.parameters = {"backbone.lora_A": _Parameter(), "backbone.weight": _Parameter()}

    def load_checkpoint(self, strict: bool = True) -> None:
        self.calls.append(f"load_checkpoint(strict={strict})")

    def configure_activation_checkpointing(self) -> None:
        self.calls.append("configure_activation_checkpointing()")

    def named_parameters(self) -> Iterator[tuple[str, Any]]:
        return iter(self.parameters.items())

    def to(self, device: Any) -> _FakeAurora:
        self.calls.append(f"to({device})")
        return self


class _FakePretrained(_FakeAurora):
    pass


class _FakeSmallPretrained(_FakeAurora):
    pass


@pytest.fixture
def train(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """workloads.aurora_finetune.train imported over fake numpy, torch and aurora modules."""
    fake_aurora = types.ModuleType("aurora")
    for name, value in {
        "Aurora": _FakeAurora,
        "AuroraPretrained": _FakePretrained,
        "AuroraSmallPretrained": _FakeSmallPretrained,
        "Batch": object,
        "Metadata": object,
    }.items():
        setattr(fake_aurora, name, value)
    optimizers: list[list[Any]] = []
    fake_torch = types.ModuleType("torch")
    fake_torch.optim = types.SimpleNamespace(  # type: ignore[attr-defined]
        AdamW=lambda params, lr: optimizers.append(list(params))
    )
    for name, module in {
        "numpy": types.ModuleType("numpy"),
        "torch": fake_torch,
        "aurora": fake_aurora,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    _forget_train_module()
    module = importlib.import_module(_TRAIN)  # a fresh import, over the fakes
    module.optimizers = optimizers  # type: ignore[attr-defined]  # what fit() gave AdamW
    yield module
    _forget_train_module()


_TRAIN = "workloads.aurora_finetune.train"


def _forget_train_module() -> None:
    sys.modules.pop(_TRAIN, None)
    package = sys.modules["workloads.aurora_finetune"]
    if hasattr(package, "train"):
        delattr(package, "train")


@pytest.mark.parametrize(
    ("model", "kind"), [("pretrained", _FakePretrained), ("small-pretrained", _FakeSmallPretrained)]
)
def test_the_model_is_built_with_autocast_and_lora(
    train: Any, model: str, kind: type[_FakeAurora]
) -> None:
    options = aurora.parse_args(
        [
            "--checkpoint-container",
            "team-a-data",
            "--run-id",
            "r",
            "--model",
            model,
            "--lora-mode",
            "all",
        ]
    )
    built = train.build_model(options)
    assert type(built) is kind
    assert built.kwargs == {
        "use_lora": True,
        "lora_mode": "all",
        "lora_steps": 40,
        "autocast": True,
    }
    assert built.calls == ["load_checkpoint(strict=False)"]


def test_training_turns_on_activation_checkpointing_and_trains_only_lora(train: Any) -> None:
    model: Any = train.build_model(
        aurora.parse_args(["--checkpoint-container", "team-a-data", "--run-id", "r"])
    )
    losses = train.fit(model, [object()], steps=0, learning_rate=1e-4, device="cpu")
    assert losses == []
    assert model.calls == [
        "load_checkpoint(strict=False)",
        "to(cpu)",
        "configure_activation_checkpointing()",
    ]
    assert train.optimizers == [[model.parameters["backbone.lora_A"]]]
    assert not model.parameters["backbone.weight"].requires_grad


def test_a_model_without_autocast_is_refused_before_training(train: Any) -> None:
    model = _FakePretrained(use_lora=True)
    with pytest.raises(RuntimeError, match="autocast=True"):
        train.fit(model, [object()], steps=0, learning_rate=1e-4, device="cpu")
    assert "configure_activation_checkpointing()" not in model.calls
