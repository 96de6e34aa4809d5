"""MultiKueue rehearsed: a manager and worker control planes, the scenario and its own watch."""

from typing import Final

# The one scenario a stack with `multikueue` plays (scenario.py).
MULTIKUEUE_SCENARIO: Final = "multikueue"
