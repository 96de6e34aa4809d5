"""Tables the settings validation and the builders both read: VM sizes, pools, priorities,
resource names and quantities, pinned versions, Azure's limits and the project's name. Plain
data, no imports from the rest of the project."""
