"""`python -m tideline …` runs the same CLI as the `tideline` command."""

from tideline.cli.main import app

app(prog_name="tideline")
