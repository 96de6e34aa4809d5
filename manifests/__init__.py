"""Pure builders: settings in, plain dicts out. Nothing in this package imports pulumi."""
