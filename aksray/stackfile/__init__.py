"""A stack file read as the Pulumi CLI reads it: bounded YAML, its scalars, merge keys and tags,
and the config values the program receives."""
