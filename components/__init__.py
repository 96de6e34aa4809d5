"""Thin Pulumi components: they register what manifests/ builds, nothing more."""
