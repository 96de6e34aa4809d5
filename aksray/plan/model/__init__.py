"""What the planner derives from a run, once: the plan, its demand, cost, critical path and the
MultiKueue split."""
