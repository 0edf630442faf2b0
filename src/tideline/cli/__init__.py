"""The `tideline` and `memo` commands (drivers only: they map arguments and errors)."""

__all__: list[str] = []
