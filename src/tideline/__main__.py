"""`python -m tideline …` runs the same CLI as the `tideline` command."""

from tideline.cli.registry import run

run()
