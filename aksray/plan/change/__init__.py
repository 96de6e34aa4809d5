"""The change one `pulumi up` makes: what the program registers for an old stack against what it
registers for the new one, classified as the providers and the engine decide (create, update,
replace, delete), and what that does to a live platform. Entry point: compute.change_plan."""
