"""The planner: what a run means (model/), every reason it could not work (checks/), and what a
person reads (report/)."""
