"""Request models from `tideline.fields`: one pydantic model per command, so a bound, default or
choice of `/api/search?k=` is the one of `tideline search -k` and `memory_search(k=…)`."""

from __future__ import annotations

from functools import cache
from typing import Annotated

from fastapi import Path
from pydantic import BaseModel, ConfigDict, create_model

from tideline.fields import MAX_ID, Command
from tideline.serve import annotated

#: A record id in a path (`/api/facts/{id}`, `/facts/{id}`, …): the bounds of `fields.id_field`,
#: so `/facts/9223372036854775808` is a one-line 422, never an `OverflowError` (#21).
RecordId = Annotated[int, Path(ge=1, le=MAX_ID)]


@cache
def request_model(cmd: Command, *skip: str) -> type[BaseModel]:
    """The arguments of `cmd` (less `skip`, which a route takes from its path) as a model that
    refuses unknown names."""
    name = "".join(
        part.title() for part in (cmd.tool or cmd.cli or "request").replace(" ", "_").split("_")
    )
    fields = {f.name: annotated(cmd, f.name) for f in cmd.fields if f.name not in skip}
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        name, __config__=ConfigDict(extra="forbid"), **fields
    )
    return model
