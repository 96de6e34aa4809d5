"""The `aksray` command line: its parser, what it refuses up front, and each command."""
