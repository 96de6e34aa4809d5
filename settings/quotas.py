"""A team's `quota`, `borrowingLimit` and `lendingLimit`: amounts per flavor and resource.

A quota amount may be `unlimited` (Kueue's nominal quota is then the whole pool at its maximum
size); limits may not: an absent limit already means "no limit". Limits are checked against the
quota they qualify.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType
from typing import Final

from catalog.pools import CPU_POOL_NAME
from catalog.quantities import (
    GPU_RESOURCE,
    RESOURCE_KEYS,
    RESOURCE_KINDS,
    RESOURCES,
    UNLIMITED,
    QuantityError,
    ResourceKind,
    parse_count,
)
from settings.model import Resources, TeamSettings
from settings.reader import Section, describe, join, string_problem

# The resources of one flavor's amounts in the order they are read and reported: the GPUs
# first, then the resource table's order.
AMOUNT_ORDER: Final = (GPU_RESOURCE, *(r for r in RESOURCES if r != GPU_RESOURCE))
AMOUNT_KEYS: Final = tuple(RESOURCE_KEYS[resource] for resource in AMOUNT_ORDER)
_LIMIT_KEYS: Final = ("borrowingLimit", "lendingLimit")


def parse_resources(
    section: Section, key: str, flavors: tuple[str, ...], *, allow_unlimited: bool = False
) -> dict[str, Resources]:
    """A `flavor -> {gpu, cpu, memory}` map (quota, borrowingLimit or lendingLimit)."""
    per_flavor = section.mapping(key, None)
    if per_flavor is None:
        return {}
    result: dict[str, Resources] = {}
    for flavor, amounts in per_flavor.value.items():
        path = join(per_flavor.path, str(flavor))
        if flavor not in flavors:
            section.problem(
                path,
                f"no pool provides flavor {flavor!r}; flavors are "
                f"{', '.join(flavors)} (the CPU pool is `cpu`, GPU pools by name)",
            )
            continue
        entry = section.child(path, amounts, AMOUNT_KEYS)
        if entry is not None:
            result[str(flavor)] = _flavor_amounts(entry, key, str(flavor), allow_unlimited)
    return result


def _flavor_amounts(entry: Section, key: str, flavor: str, allow_unlimited: bool) -> Resources:
    unlimited = {
        resource
        for resource in AMOUNT_KEYS
        if entry.has(resource) and entry.value[resource] == "unlimited"
    }
    if unlimited and not allow_unlimited:
        for resource in sorted(unlimited):
            entry.problem(
                join(entry.path, resource),
                "only a quota can be unlimited; leave a limit out for no limit",
            )
        return Resources()  # reported once: the amount is not read again as a number
    given = {
        resource: _amount(entry, RESOURCE_KINDS[resource], unlimited) for resource in AMOUNT_ORDER
    }
    _check_cpu_flavor(entry, key, flavor, given[GPU_RESOURCE])
    found = {resource: value for resource, value in given.items() if value is not None}
    return Resources(MappingProxyType(found))


def _amount(entry: Section, kind: ResourceKind, unlimited: set[str]) -> int | None:
    """One amount in canonical units; None when left out (or reported)."""
    if kind.key in unlimited:
        return UNLIMITED
    if not entry.has(kind.key):
        return None
    if kind.parse is parse_count:  # a count is an integer of the stack file's own type
        return entry.integer(kind.key, 0, maximum=kind.maximum)
    return _quantity(entry, kind)


def _quantity(entry: Section, kind: ResourceKind) -> int | None:
    key, parse, maximum, hint = kind.key, kind.parse, kind.maximum, kind.hint
    path = join(entry.path, key)
    value = entry.value[key]
    wrong = string_problem(value) if isinstance(value, str) else None
    if wrong is not None:
        entry.problem(path, wrong)
        return None
    try:
        amount = parse(value)
    except QuantityError as exc:
        entry.problem(path, f"{exc}")
        return None
    if amount < 0 or amount > maximum:
        entry.problem(path, f"{describe(entry.value[key])} is out of range; {hint}")
        return None
    if key == "memory" and 0 < amount < 2**20:
        # A bare number is bytes: `memory: 32` is 32 bytes, surely a missing unit.
        entry.problem(
            path,
            f"{describe(entry.value[key])} is {amount} bytes, less than 1Mi: add the unit, "
            f'e.g. "{entry.value[key]}Gi"',
        )
        return None
    return amount


def _check_cpu_flavor(entry: Section, key: str, flavor: str, gpu: int | None) -> None:
    """The CPU pool has no GPUs: no GPU amount on it, and its quota names cpu and memory."""
    if flavor != CPU_POOL_NAME:
        return
    if gpu:
        entry.problem(
            join(entry.path, "gpu"),
            "the CPU pool has no GPUs; put GPU quota on a GPU pool's flavor",
        )
    if key != "quota":
        return
    for resource in ("cpu", "memory"):
        if not entry.has(resource):
            entry.problem(
                join(entry.path, resource),
                "is required: the CPU pool has no GPUs to derive it from (Ray heads "
                "request cpu and memory); write e.g. cpu: 8, memory: 32Gi",
            )


def _amount_pairs(
    limit: Resources, nominal: Resources
) -> Iterator[tuple[str, int | None, int | None]]:
    """(resource key, limit amount, quota amount) per resource."""
    for resource in AMOUNT_ORDER:
        yield RESOURCE_KEYS[resource], limit.amount(resource), nominal.amount(resource)


def check_limits_within_quota(section: Section, team: TeamSettings) -> None:
    """Every limit qualifies a quota the team has, and a team never lends more than it has."""
    for key in _LIMIT_KEYS:
        limits = team.borrowing_limit if key == "borrowingLimit" else team.lending_limit
        for flavor, limit in limits.items():
            path = join(join(section.path, key), flavor)
            if flavor not in team.quota:
                section.problem(
                    path,
                    f"flavor {flavor!r} has no quota for this team; add "
                    f"quota.{flavor} (gpu: 0 to only borrow) or remove it",
                )
                continue
            nominal = team.quota[flavor]
            _check_limit_on_unlimited(
                section, path, key=key, flavor=flavor, limit=limit, nominal=nominal
            )
            if key == "lendingLimit":
                _check_lent_within_quota(section, path, flavor=flavor, limit=limit, nominal=nominal)


def _check_limit_on_unlimited(
    section: Section, path: str, *, key: str, flavor: str, limit: Resources, nominal: Resources
) -> None:
    """A limit on top of an unlimited quota means nothing."""
    for resource, given, have in _amount_pairs(limit, nominal):
        if given is not None and have == UNLIMITED:
            section.problem(
                join(path, resource),
                f"quota.{flavor}.{resource} is unlimited (the whole pool); a "
                f"{key} on top of it means nothing, remove it",
            )


def _check_lent_within_quota(
    section: Section, path: str, *, flavor: str, limit: Resources, nominal: Resources
) -> None:
    for resource, lent, have in _amount_pairs(limit, nominal):
        if lent is not None and have is not None and have != UNLIMITED and lent > have:
            section.problem(
                join(path, resource),
                "a team cannot lend more than its nominal quota; lower the "
                f"lendingLimit or raise quota.{flavor}.{resource}",
            )
