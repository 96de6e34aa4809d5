"""The scenarios' names, apart from their code, so the CLI lists them without importing it."""

from __future__ import annotations

from typing import Final

SUBMIT_ALL: Final = "submit-all"
INFERENCE_PREEMPTS_TRAINING: Final = "inference-preempts-training"
BORROW_AND_RECLAIM: Final = "borrow-and-reclaim"
NODES_ARRIVE_LATE: Final = "nodes-arrive-late"
NO_CAPACITY: Final = "no-capacity"
ENDPOINT_SCALES: Final = "endpoint-scales"
FULL_NODE_GANG: Final = "full-node-gang"
GANGS_COMPETE: Final = "gangs-compete"
LATE_ADMISSION: Final = "endpoint-admitted-late"
# Every scenario, in the order `--scenario all` plays them.
ALL_SCENARIOS: Final = (
    SUBMIT_ALL,
    INFERENCE_PREEMPTS_TRAINING,
    BORROW_AND_RECLAIM,
    NODES_ARRIVE_LATE,
    NO_CAPACITY,
    FULL_NODE_GANG,
    GANGS_COMPETE,
    LATE_ADMISSION,
    ENDPOINT_SCALES,
)
SCENARIO_NAMES: Final = ALL_SCENARIOS
# A stack with `multikueue` plays this one alone (aksray/rehearse/multikueue_scenario.py).
MULTIKUEUE_SCENARIO: Final = "multikueue"
