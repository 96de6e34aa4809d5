"""KAI Scheduler's scheduler actions at the pinned version (v0.17.0), and which of them evict.

KAI's scheduler runs a list of actions every cycle. The SchedulingShard (`spec.actions`, one
entry per action name: `enabled`, `priority`) decides the list; the chart renders its default
shard from `scheduler.actions` (manifests/helm_values.py). Facts read at KAI v0.17.0:

- the built-in actions and their default priorities, higher first (pkg/apis/kai/v1/
  schedulingshard_types.go `defaultActionPriorities`; the SchedulingShard CRD's description of
  `spec.actions` lists the same, which the tests read);
- `allocate` only places and binds into free or releasing capacity, a gang all or nothing; the
  other four evict running pods (pkg/scheduler/actions/*: the solver behind consolidation,
  reclaim and preempt, and stalegangeviction, are the only callers of the eviction);
- an action name the shard does not know is added as a new action, enabled, priority 0: a
  misspelt `preemt: {enabled: false}` leaves `preempt` on, and an enabled unknown name stops the
  scheduler from starting;
- an empty action list makes the scheduler fall back to all five, so `allocate` stays on;
- with either placement strategy `spread`, consolidation is off by default.
"""

from __future__ import annotations

from typing import Final

from catalog.quantities import GPU_RESOURCE, RESOURCE_KEYS

# action -> default priority (higher runs first).
KAI_ACTIONS: Final[dict[str, int]] = {
    "allocate": 500,
    "consolidation": 400,
    "reclaim": 300,
    "preempt": 200,
    "stalegangeviction": 100,
}
PLACING_ACTION: Final = "allocate"
# Each evicts pods of running workloads: re-packing, cross-queue reclaim, same-queue priority
# preemption, and a gang left below its minimum for longer than its grace period.
EVICTING_ACTIONS: Final = ("consolidation", "reclaim", "preempt", "stalegangeviction")

# The chart's default placement strategy (values.yaml `scheduler.placementStrategy`); the other
# is `spread`.
BINPACK: Final = "binpack"
SPREAD: Final = "spread"

# KAI's queue admission webhook (v0.17.0 pkg/operator/operands/queue_controller/resources.go):
# KAI's operator registers it itself, in the ValidatingWebhookConfiguration
# `kai-queue-validation-v2`, failure policy Fail, sideEffects None, for CREATE and UPDATE of
# every scheduling.run.ai/v2 Queue, once the chart's post-install hook has applied `kai-config`.
# It refuses a Queue without `spec.resources` (pkg/admission/webhook/queuehooks/
# queue_validator.go: "resources must be specified"); the Queue CRD leaves the field optional.
QUEUE_WEBHOOK: Final = "queue-validation.kai.scheduler"
QUEUE_WEBHOOK_CONFIGURATION: Final = "kai-queue-validation-v2"


# KAI resource names, in the order a KAI Queue lists them (its own order, not Kueue's).
KAI_RESOURCES: Final = tuple(RESOURCE_KEYS[r] for r in ("cpu", GPU_RESOURCE, "memory"))
