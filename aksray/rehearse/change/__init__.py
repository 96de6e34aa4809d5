"""Day two on the rig: a stack already running, changed by `pulumi up` (`aksray rehearse
--since OLD`), and the operators upgraded under it (`--upgrade-operators`).

The old stack is applied through the real engine and its workloads run; then each change is
previewed (what the engine would do, against what `aksray plan --since` predicted), applied with
`pulumi up`, and checked: what the change plan keeps survives, `pulumi up` finishes or stops
where the plan said it would, what Kueue admits after the change fits the new quotas, and
destroy leaves nothing.
"""

CHANGE_SCENARIO = "change"
