"""MultiKueue: the manager's objects, its workers, and what a dispatched workload needs on one."""
