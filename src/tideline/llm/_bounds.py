"""Bounds on what a model may answer, declared once for the schema it sees and the validation.

A limit the code enforces but the model never sees cannot be repaired: the model is not told. So
every bound lives in the pydantic model of the answer and reaches the wire schema from there:
string lengths and number ranges as pydantic `Field`s (maxLength, minimum, ...), and list sizes
as `Items(n)`. A list over its cap is not an invalid answer — a model that found 300
observations found something — so `Items` cuts it to the first `n` before the items are even
validated (10,000 items cost no more than `n`) and records the cut, which the step's report and
the run record show ("observations: cut at 50 of 10000").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

CUTS = "cuts"  # the validation-context key where `Items` records what it cut


@dataclass(frozen=True)
class Items:
    """`Annotated[list[X], Items(n)]`: maxItems n in the schema; more items are cut to n."""

    n: int

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        def cut(value: Any, info: core_schema.ValidationInfo) -> Any:
            if isinstance(value, list) and len(value) > self.n:
                context = info.context
                if isinstance(context, dict) and isinstance(context.get(CUTS), list):
                    context[CUTS].append(f"{info.field_name}: cut at {self.n} of {len(value)}")
                return value[: self.n]
            return value

        return core_schema.with_info_before_validator_function(cut, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        out["maxItems"] = self.n
        return out
