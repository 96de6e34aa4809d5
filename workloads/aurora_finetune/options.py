"""aurora-finetune's options: its command line, and what the training task reads of it."""

from __future__ import annotations

from dataclasses import dataclass

from workloads.common import blob, cli_types
from workloads.common.layout import CHECKPOINTS_FOLDER, DATASETS_CONTAINER
from workloads.common.options import option

LORA_MODES = ("single", "from_second", "all")
MODELS = ("pretrained", "small-pretrained")


@dataclass(frozen=True)
class Options:
    run_id: str = option(type=cli_types.path_segment, help="this run's checkpoint folder")
    checkpoint_container: str = option(help="the team's own container (<team>-data)")
    dataset_container: str = option(DATASETS_CONTAINER)
    dataset_prefix: str = option("aurora/train", blob_path=True)
    checkpoint_prefix: str = option(f"{CHECKPOINTS_FOLDER}/aurora-finetune", blob_path=True)
    model: str = option("pretrained", choices=MODELS)
    lora_mode: str = option("single", choices=LORA_MODES)
    lora_steps: int = option(40, type=cli_types.positive_int)
    steps: int = option(100, type=cli_types.positive_int)
    learning_rate: float = option(3e-5, type=cli_types.fraction)
    max_samples: int = option(0, type=cli_types.non_negative_int)  # 0: every sample

    @property
    def lora_blob(self) -> str:
        return blob.blob_path(self.checkpoint_prefix, self.run_id, "lora.pt")

    @property
    def metrics_blob(self) -> str:
        return blob.blob_path(self.checkpoint_prefix, self.run_id, "metrics.json")
