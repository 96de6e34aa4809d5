"""The planner's checks: every reason a workload could never run, found before `pulumi up`.

Each check reads the plan (aksray/model.py) and reports `Problem(path, message)`s, the same
type the settings validation reports, naming the config path a user would change. Errors fail
`aksray plan` (exit 1); warnings do not. What the settings validation already rejects (unknown
teams, priorities or flavors, limits above quotas, ...) is not checked again here: a plan only
exists for a valid configuration.

Errors:
- pool capacity: Σ team nominal quotas of a flavor exceed what its pool holds at maxCount
  (a warning instead with `scheduling.allowOvercommit: true`);
- gang admission: a workload's gang (an elastic workload's minimum) fits no flavor of its
  team's ClusterQueue with the team's nominal quota plus what it may borrow
  (min(borrowingLimit, what its cohort can lend));
- node fit: a pod asks for more GPUs, CPU or memory than one node of the flavor Kueue gives it
  can offer (node allocatable, scheduling/nodes.py); a warning when only some of the flavors
  it may get are too small;
- GPU share: a GPU worker asks more CPU or memory per GPU than one GPU's share of a node of a
  pool it may get (node allocatable / GPUs per node): reported at the key that asked
  (`cpuPerGpu`/`memoryPerGpu`) or at the pool's vmSize when it is the payload's minimum;
- full node: a GPU pod shape that leaves GPUs of a full node unused;
- gang fits its pool: a gang needs more nodes at once than its pool can ever have (whatever the
  quota and scheduling.allowOvercommit say);
- KAI queues unlimited: a KAI queue with a quota or limit other than -1 (a second admission
  gate beside Kueue's; a limit left out counts as 0);
- KAI never evicts: KAI's scheduler would run an action that evicts admitted pods (consolidation,
  reclaim, preempt, stalegangeviction); a warning instead when the cluster's own KAI runs
  actions the stack cannot see (`operators.install: false` without `operators.kaiActions`);
- priority classes: a workload's priority has no Kueue WorkloadPriorityClass or no KAI
  PriorityClass;
- Kueue integrations: a workload's kind is not among the frameworks Kueue's configuration
  enables;
- CRDs first: a release value that makes a chart (or its operator) create an object of an API
  whose CRD nothing in the stack installs (a Prometheus Operator ServiceMonitor on a new AKS
  cluster), named by the setting behind the value; and any custom resource the stack itself
  registers whose CRD nothing installs (a release, AKS's metrics add-on, a Prometheus Operator
  the stack file declares);
- endpoints never evicted: a RayService that something in its team outranks, or that may run
  on borrowed quota (KubeRay 1.7 keeps a suspended RayService's cluster running);
- endpoints never on spot: a RayService whose GPU pods Kueue places on a spot pool (a warning
  when only a flavor it falls back to is spot);
- model fits the GPU: a workload whose GPU pods get GPUs with less memory than its model needs
  (its spec's `gpu_memory_gb`; a warning when only a fallback flavor's GPUs are too small);
- default providers: `pulumi:disable-default-providers` names a package whose resources this
  program creates with the default provider (`pulumi up` refuses them; the mocks do not).

Warnings: GPU pools that keep nodes while idle (`minCount > 0`); team quota that no enabled
workload of the stack can use; a team `overQuotaWeight` that has no effect (KAI queues are
unlimited); each role assignment an admin must grant because the stack creates none
(`cluster.createRoleAssignments: false`); a Kubernetes version or region newer than the
catalogues of Azure's offer, or a version past the end of life they give; an elastic
workload whose maximum its team's quota plus what it may borrow can never admit at once
(its minimum is the gang checked above); a workload the stack starts that streams the base
model from Blob while the stack does not start model-stage, which copies it there; Pulumi ESC
environments the stack file imports (their values are not in the plan); a GPU size in a region
the table of GPU sizes per region does not cover; a render-only stack on a new AKS cluster (its
operators must be installed before the YAML is applied).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from aksray.checks.azure import check_role_assignments_left_to_an_admin
from aksray.checks.capacity import (
    check_gang_fits_pool,
    check_node_fit,
    check_pool_capacity,
    check_quotas_fit_pools,
)
from aksray.checks.catalogues import check_catalogue_staleness
from aksray.checks.crds import check_chart_objects_have_crds, check_objects_have_crds
from aksray.checks.findings import Findings
from aksray.checks.fit import check_model_fits_gpu
from aksray.checks.gangs import check_gang_admission, check_maximum_admissible
from aksray.checks.kai import (
    check_kai_never_evicts,
    check_kai_queues_unlimited,
    check_over_quota_weight,
)
from aksray.checks.models import check_model_staged
from aksray.checks.offer import check_gpu_size_offer_known, check_rendered_operators
from aksray.checks.packing import check_full_node, check_gpu_share
from aksray.checks.schedulers import check_kueue_integrations, check_priority_classes
from aksray.checks.services import check_services_never_evicted
from aksray.checks.spot import check_endpoint_not_on_spot
from aksray.checks.unseen import check_default_providers_enabled, check_environments_seen
from aksray.checks.waste import check_idle_gpus, check_unused_quota
from aksray.model import Plan
from settings.model import Settings

Check = Callable[[Plan, Findings], None]
SettingsCheck = Callable[[Settings, Findings], None]

CHECKS: Final[tuple[Check, ...]] = (
    check_pool_capacity,
    check_gang_admission,
    check_gang_fits_pool,
    check_maximum_admissible,
    check_node_fit,
    check_gpu_share,
    check_full_node,
    check_kai_queues_unlimited,
    check_kai_never_evicts,
    check_priority_classes,
    check_kueue_integrations,
    check_chart_objects_have_crds,
    check_objects_have_crds,
    check_services_never_evicted,
    check_idle_gpus,
    check_unused_quota,
    check_over_quota_weight,
    check_role_assignments_left_to_an_admin,
    check_catalogue_staleness,
    check_model_staged,
    check_endpoint_not_on_spot,
    check_model_fits_gpu,
    check_default_providers_enabled,
    check_environments_seen,
    check_gpu_size_offer_known,
    check_rendered_operators,
)


# The checks that read the settings alone, run before the program as well (`aksray plan` stops
# at their errors: a stack they refuse is not built, however large).
SETTINGS_CHECKS: Final[tuple[SettingsCheck, ...]] = (check_quotas_fit_pools,)


def run_settings_checks(settings: Settings) -> Findings:
    findings = Findings()
    for check in SETTINGS_CHECKS:
        check(settings, findings)
    return findings


def run_checks(plan: Plan, checks: Iterable[Check] = CHECKS) -> Findings:
    findings = Findings()
    for check in checks:
        check(plan, findings)
    return findings
