"""Every check of the plan, in the order they report, and the two ways to run them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from aksray.plan.checks.admission import check_kuberay_identity
from aksray.plan.checks.azure import (
    check_free_tier_size,
    check_image_pulls,
    check_role_assignments_left_to_an_admin,
)
from aksray.plan.checks.capacity import (
    check_gang_fits_pool,
    check_node_fit,
    check_pool_capacity,
    check_quotas_fit_pools,
)
from aksray.plan.checks.catalogues import check_catalogue_staleness
from aksray.plan.checks.crds import check_chart_objects_have_crds, check_objects_have_crds
from aksray.plan.checks.findings import Findings
from aksray.plan.checks.fit import check_model_fits_gpu
from aksray.plan.checks.gangs import check_gang_admission, check_maximum_admissible
from aksray.plan.checks.kai import (
    check_kai_never_evicts,
    check_kai_queues_unlimited,
    check_over_quota_weight,
)
from aksray.plan.checks.models import check_model_staged
from aksray.plan.checks.offer import check_gpu_size_offer_known, check_rendered_operators
from aksray.plan.checks.packing import check_full_node, check_gpu_share
from aksray.plan.checks.schedulers import check_kueue_integrations, check_priority_classes
from aksray.plan.checks.services import check_services_never_evicted
from aksray.plan.checks.spot import check_endpoint_not_on_spot
from aksray.plan.checks.unseen import check_default_providers_enabled, check_environments_seen
from aksray.plan.checks.waste import check_idle_gpus, check_unused_quota
from aksray.plan.model.plan import Plan
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
    check_free_tier_size,
    check_image_pulls,
    check_catalogue_staleness,
    check_model_staged,
    check_endpoint_not_on_spot,
    check_model_fits_gpu,
    check_default_providers_enabled,
    check_environments_seen,
    check_gpu_size_offer_known,
    check_rendered_operators,
    check_kuberay_identity,
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
