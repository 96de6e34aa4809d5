"""The stack configuration as one typed, frozen, validated model.

`settings.load.load_settings()` reads `pulumi.Config` once, before any resource exists; the
parsers (`settings.parse.parse_settings` and one module per config section) are pure, so every
rule is tested without the Pulumi runtime. Every problem in the stack file is collected, not just
the first, and each names its config path the way `pulumi config set --path` spells it.
"""
