"""The scheduling core: what Kueue admits and what nodes hold, as typed, pure data.

Between settings/ (what the stack file says) and manifests/ (the objects that get deployed):

- amounts.py: one immutable amounts type over catalog/quantities.py's resource table;
- nodes.py: node allocatable, one GPU's share of a node, a pool's capacity;
- podsets.py: the pod sets of a workload as Kueue counts them;
- queues.py: each team's ClusterQueue with its effective quota per flavor, and the one reader of
  a recorded ClusterQueue back into that type;
- admission.py: Kueue's admission (flavor assignment, borrowing, preemption), stamped with the
  one Kueue release it models;
- multikueue.py: a stack with `multikueue` split into what each cluster runs, the manager's
  quota per team being the sum of the workers' effective quotas.

The Kueue builders serialise these types without arithmetic; the planner and the rehearsal read
them instead of re-deriving quotas or borrowing.
"""
