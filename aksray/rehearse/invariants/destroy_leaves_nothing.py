"""The invariant `destroy-leaves-nothing`: once `pulumi destroy` returns, neither the cluster
nor the Pulumi stack holds anything of the stack (aksray/rehearse/rig/footprint.py says what
counts). Nothing to see while the scenario plays: the run breaches it after the destroy."""

from __future__ import annotations

from collections.abc import Sequence

from aksray.rehearse.record import Sample, SampleCheck, Verdict


def watch() -> SampleCheck:
    def check(_sample: Sample, _verdict: Verdict) -> None:
        """Nothing is destroyed while a scenario plays."""

    return check


def judge(verdict: Verdict, left: Sequence[str]) -> None:
    """After the destroy: what is left behind breaks the invariant."""
    if left:
        verdict.breach("left behind: " + ", ".join(left))
