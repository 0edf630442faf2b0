"""What the drivers make of the values they are sent and the results they send back: one JSON
object per result, and a list of names from however a client spelled it."""

from __future__ import annotations

import dataclasses
from typing import Any


def to_dict(result: Any) -> dict[str, Any]:
    """A tool's JSON object: a dict, a `to_dict()`, a dataclass, else `{"result": value}`."""
    if isinstance(result, dict):
        return result
    if hasattr(result, "to_dict"):
        return dict(result.to_dict())
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return dataclasses.asdict(result)
    return {"result": result}


def names(value: list[str] | str | None) -> list[str] | None:
    """Models send lists, JSON strings (pre-parsed by the SDK) or 'a, b'; the core gets a list."""
    if value is None or isinstance(value, list):
        return value
    return [part.strip() for part in value.split(",") if part.strip()]
