"""The planner's checks: every reason a workload could never run, found before `pulumi up`.

Each check reads the plan (aksray/plan/model/plan.py) and reports `Problem(path, message)`s, the
same
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
- endpoint evictions: a RayService that something in its team outranks (an error), or that may
  run on borrowed quota (a warning: reclaim evicts the whole endpoint; KubeRay 1.6.2 suspends
  its cluster in place and the GPUs go to the lender);
- endpoints never on spot: a RayService whose GPU pods Kueue places on a spot pool (a warning
  when only a flavor it falls back to is spot);
- model fits the GPU: a workload whose GPU pods get GPUs with less memory than its model needs
  (its spec's `gpu_memory_gb`; a warning when only a fallback flavor's GPUs are too small);
- default providers: `pulumi:disable-default-providers` names a package whose resources this
  program creates with the default provider (`pulumi up` refuses them; the mocks do not).

Warnings: GPU pools that keep nodes while idle (`minCount > 0`); team quota that no enabled
workload of the stack can use; a team `overQuotaWeight` that has no effect (KAI queues are
unlimited); each role assignment an admin must grant because the stack creates none
(`cluster.createRoleAssignments: false`); the Free AKS tier on a cluster that can grow
past the 10 nodes AKS means it for; a Kubernetes version or region newer than the
catalogues of Azure's offer, or a version past the end of life they give; an elastic
workload whose maximum its team's quota plus what it may borrow can never admit at once
(its minimum is the gang checked above); a workload the stack starts that streams the base
model from Blob while the stack does not start model-stage, which copies it there; Pulumi ESC
environments the stack file imports (their values are not in the plan); a GPU size in a region
the table of GPU sizes per region does not cover; a render-only stack on a new AKS cluster (its
operators must be installed before the YAML is applied).
"""
