"""team-members: a team's member acts as a member would (impersonated: a user in the team's
member group). Every way around the queues is refused with its message; the member may use
its team's namespace and nothing else; and the RayJob a member writes by hand (docs/teams.md)
is admitted by Kueue within the team's quota, placed by KAI and finishes.

The stack is applied with its workloads off, so the member's job is the one thing its team
runs. Every way around is sent as a dry run: admission runs in full, nothing is kept.
"""

from __future__ import annotations

import time
from typing import Any, Final

from aksray.live.kube import Discovery, Kube, KubeError
from aksray.rehearse.scenarios.context import Context, all_off, first_gpu_team
from aksray.rehearse.scenarios.member_job import (
    ADMIN,
    EXAMPLE_JOB,
    Bypass,
    member_ray_job,
    member_rights,
    not_allowed_priority,
    pod_bypasses,
    ray_bypasses,
)
from aksray.rehearse.scenarios.sizing import NotApplicableError
from aksray.rehearse.scenarios.workload_state import admitted, finished
from manifests.helm_values import KAI_SCHEDULER_NAME
from settings.access.teams import allowed_priorities
from settings.model import TeamSettings

MEMBER_USER: Final = "member@example.com"
RAYJOBS: Final = "/apis/ray.io/v1/namespaces/{namespace}/rayjobs"
POLICY_WAIT_S: Final = 30.0


def play(ctx: Context) -> None:
    team = first_gpu_team(ctx)
    if not team.members:
        raise NotApplicableError(f"team {team.name} names no member group")
    others = [t for t in ctx.settings.scheduling.teams if t.name != team.name]
    other = others[0] if others else None
    if other is None:
        ctx.notes.append(
            f"one team only: team {team.name}'s member is checked against kube-system for "
            "another namespace, and against no other team's queues"
        )
    admin = ctx.observer.kube
    member = admin.as_user(MEMBER_USER, (team.members[0],))
    ctx.apply(all_off(ctx.stack_workloads), "members only")
    ctx.observer.note(team.name, "member", f"{MEMBER_USER} in group {team.members[0]}")
    _wait_for_policies(ctx, admin, team)
    _check_rights(ctx, member, team, other.namespace if other else "kube-system")
    priorities = allowed_priorities(team, ctx.settings.workloads)
    bypasses = [
        *ray_bypasses(team, priorities[0], other, not_allowed_priority(priorities)),
        *pod_bypasses(team),
    ]
    for bypass in bypasses:
        _check_refused(ctx, member if bypass.who != ADMIN else admin, bypass)
    _run_member_job(ctx, member, team, priorities[0])


def _wait_for_policies(ctx: Context, admin: Kube, team: TeamSettings) -> None:
    """The API server loads new policies from its watch, not within the `pulumi up` that
    created them: probe (dry runs) until both refuse, and say how long that took."""
    probes = [b for b in pod_bypasses(team) if b.who == ADMIN][:1] + ray_bypasses(
        team, allowed_priorities(team, ctx.settings.workloads)[0], None, None
    )[:1]
    started = time.monotonic()
    while True:
        waiting = [p for p in probes if _refusal(admin, p) is None]
        if not waiting or time.monotonic() - started > POLICY_WAIT_S:
            break
        time.sleep(0.5)
    seconds = time.monotonic() - started
    ctx.expect(
        f"the admission policies are in force within {POLICY_WAIT_S:.0f}s of pulumi up",
        not waiting,
        "still admitted: " + ", ".join(p.what for p in waiting),
    )
    ctx.observer.note(team.name, "policies", f"in force {seconds:.1f}s after pulumi up")


def _refusal(kube: Kube, bypass: Bypass) -> KubeError | None:
    """The error the dry run of `bypass` is refused with; None when it is admitted."""
    meta = bypass.manifest["metadata"]
    path = Discovery(kube).path(
        bypass.manifest["apiVersion"], bypass.manifest["kind"], "x", meta["namespace"]
    )
    if path is None:
        return KubeError(404, f"the server does not serve {bypass.manifest['kind']}")
    try:
        kube.create(path.rsplit("/", 1)[0], bypass.manifest, dry_run=True)
    except KubeError as error:
        return error
    return None


def _check_rights(ctx: Context, member: Kube, team: TeamSettings, other_namespace: str) -> None:
    """Each right as the API server decides it for the member (SelfSubjectAccessReview), and
    one read of another namespace's RayJobs made for real."""
    for right in member_rights(team, other_namespace):
        review = member.create(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", right.review()
        )
        allowed = bool((review.get("status") or {}).get("allowed"))
        ctx.expect(
            f"a member {'may' if right.allowed else 'may not'} {right.what}",
            allowed == right.allowed,
            f"the API server says allowed={allowed}",
        )
    try:
        member.items(RAYJOBS.format(namespace=other_namespace))
        ctx.expect(f"a member cannot list RayJobs in {other_namespace}", False, "it could")
    except KubeError as error:
        ctx.expect(
            f"a member cannot list RayJobs in {other_namespace}",
            error.status == 403,
            f"{error.status}: {error.message}",
        )


def _check_refused(ctx: Context, kube: Kube, bypass: Bypass) -> None:
    """The object, sent as a dry run, is refused with the expected words."""
    name = f"{bypass.what} (as {'the admin' if bypass.who == ADMIN else 'a member'}) is refused"
    error = _refusal(kube, bypass)
    if error is None:
        ctx.expect(name, False, "admitted")
        return
    held = error.status == 403 and bypass.refused_with in error.message
    ctx.expect(name, held, f"{error.status}: {error.message}")
    if held:
        namespace = bypass.manifest["metadata"]["namespace"]
        ctx.observer.note(namespace, "refused", f"{bypass.what}: {error.message}")


def _run_member_job(ctx: Context, member: Kube, team: TeamSettings, priority: str) -> None:
    """The member's own RayJob: admitted, every pod placed by KAI, finished; then deleted as
    the member would."""
    job = member_ray_job(team, priority)
    path = RAYJOBS.format(namespace=team.namespace)
    member.create(path, job)
    ctx.observer.note(EXAMPLE_JOB, "submitted", f"as {MEMBER_USER} to {team.local_queue}")
    ran = ctx.wait(f"{EXAMPLE_JOB} to be admitted", admitted(EXAMPLE_JOB), timeout=240)
    ctx.expect(f"{EXAMPLE_JOB} admitted by Kueue", ran, ctx.why_waiting(EXAMPLE_JOB))
    placed = ctx.wait(
        f"{EXAMPLE_JOB}'s pods bound by KAI",
        lambda s: any(_placed_by_kai(p, EXAMPLE_JOB) for p in s.pods),
        timeout=180,
    )
    sample = ctx.observer.last
    pods = [p for p in (sample.pods if sample else []) if _of_job(p, EXAMPLE_JOB)]
    ctx.expect(
        f"{EXAMPLE_JOB}'s pods bound, each by {KAI_SCHEDULER_NAME}",
        placed and len(pods) == 2 and all(_placed_by_kai(p, EXAMPLE_JOB) for p in pods),
        f"{len(pods)} pods: "
        + ", ".join(f"{p['spec'].get('schedulerName')}@{p['spec'].get('nodeName')}" for p in pods),
    )
    done = ctx.wait(f"{EXAMPLE_JOB} to finish", finished(EXAMPLE_JOB), timeout=240)
    ctx.expect(f"{EXAMPLE_JOB} finished", done, ctx.why_waiting(EXAMPLE_JOB))
    member.delete(f"{path}/{EXAMPLE_JOB}")
    gone = ctx.wait(
        f"{EXAMPLE_JOB} deleted by the member",
        lambda s: not any(key[2] == EXAMPLE_JOB for key in s.owners),
        timeout=120,
    )
    ctx.expect(f"the member deleted {EXAMPLE_JOB}", gone, "still there")


def _of_job(pod: dict[str, Any], job: str) -> bool:
    labels = pod["metadata"].get("labels") or {}
    return str(labels.get("ray.io/cluster", "")).startswith(f"{job}-")


def _placed_by_kai(pod: dict[str, Any], job: str) -> bool:
    spec = pod.get("spec") or {}
    return (
        _of_job(pod, job)
        and spec.get("schedulerName") == KAI_SCHEDULER_NAME
        and bool(spec.get("nodeName"))
    )
