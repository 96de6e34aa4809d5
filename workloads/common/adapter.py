"""Where the LoRA adapter lives in Blob, as the options of the payloads that write and read it.

qwen-lora writes the adapter there and vllm-batch reads it: both take these options, with the
shared layout's defaults, so the two can never disagree on where it is. The container is the
container of the team that runs qwen-lora, which the program always names (no default: a job
never guesses where a team may write).
"""

from __future__ import annotations

from dataclasses import dataclass

from workloads.common import cli_types
from workloads.common.layout import ADAPTER_NAME, ADAPTER_PREFIX
from workloads.common.options import option


@dataclass(frozen=True, kw_only=True)
class AdapterLocation:
    adapter_container: str = option(help="the container of the team that runs qwen-lora")
    adapter_prefix: str = option(ADAPTER_PREFIX, blob_path=True)
    adapter_name: str = option(ADAPTER_NAME, type=cli_types.path_segment)
