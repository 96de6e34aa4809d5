"""Pinned versions: images and the API versions we write.

The Ray image: `rayproject/ray-llm` carries Ray with the `llm` extra (vLLM included) on CUDA.
Tag `2.58.0-py312-cu130` = Ray 2.58.0 (whose `ray[llm]` pins vLLM 0.26.0), Python 3.12,
CUDA 13.0 (NVIDIA driver 580 or newer on the GPU nodes). Every payload is written against Ray
2.58.0: `ray.data.llm.build_processor` / `vLLMEngineProcessorConfig`,
`ray.serve.llm.build_openai_app`, `LLMConfig.lora_config.dynamic_lora_loading_path` with
`azure://` paths. The payload test environment (workloads/requirements-test.txt) pins the same
Ray version, and `RAY_VERSION` is what the RayCluster specs declare.
"""

from __future__ import annotations

from typing import Final

RAY_VERSION: Final = "2.58.0"
RAY_IMAGE: Final = f"rayproject/ray-llm:{RAY_VERSION}-py312-cu130"

RAY_API_VERSION: Final = "ray.io/v1"
