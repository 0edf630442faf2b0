"""What each dream layer's model must answer: pydantic models, validated by the LLM client.

Ranges are enforced here (1–5 scores, 3–5 symbols) and so are the narratives' own limits (text
lengths, tags, links), so the model sees them in the schema; lists past their cap are cut and
recorded (`Items`). Whether an id is one the model was shown is checked by the layer, which
refuses what it was not given.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from tideline.llm import Items
from tideline.memory import MAX_ENTITIES_ROLE, MAX_GESTURE, MAX_NARRATIVE_TEXT, MAX_TAG, MAX_TAGS
from tideline.store import MAX_ID

Id = Annotated[int, Field(ge=-MAX_ID, le=MAX_ID)]
Ids = Annotated[list[Id], Items(100)]
Text = Annotated[str, Field(max_length=MAX_NARRATIVE_TEXT)]
Why = Annotated[str, Field(max_length=2000)]
Tags = Annotated[list[Annotated[str, Field(max_length=MAX_TAG)]], Items(MAX_TAGS)]
MAX_ITEMS = 30


class MemoryOut(BaseModel):
    gesture: str = Field(min_length=1, max_length=MAX_GESTURE)
    context: Text = ""
    cognition_direction: Text = ""
    importance: int = Field(3, ge=1, le=5)
    emotional: int = Field(3, ge=1, le=5)
    unresolved: int = Field(1, ge=1, le=5)
    tags: Tags = []
    entities_role: str = Field("", max_length=MAX_ENTITIES_ROLE)
    related_entities: Annotated[list[Annotated[str, Field(max_length=200)]], Items(MAX_TAGS)] = []
    source_links: Annotated[list[Id], Items(1000)] = []


class LinkOut(BaseModel):
    narrative: Id
    turns: Annotated[list[Id], Items(1000)]


class Solidified(BaseModel):
    memories: Annotated[list[MemoryOut], Items(MAX_ITEMS)] = []
    links: Annotated[list[LinkOut], Items(MAX_ITEMS)] = []


class ReweighOut(BaseModel):
    id: Id
    importance: int | None = Field(None, ge=1, le=5)
    emotional: int | None = Field(None, ge=1, le=5)
    unresolved: int | None = Field(None, ge=1, le=5)
    why: Why = ""


class SelfConceptOut(BaseModel):
    text: str = Field(min_length=1, max_length=MAX_GESTURE)
    context: Text = ""
    rests_on: Annotated[list[Id], Items(100), Field(min_length=1)]
    importance: int = Field(3, ge=1, le=5)
    emotional: int = Field(2, ge=1, le=5)
    unresolved: int = Field(1, ge=1, le=5)


class ConflictOut(BaseModel):
    a: Id
    b: Id
    why: Why = ""


class FactConflictOut(BaseModel):
    memory: Id
    fact_id: Id
    question: Why = Field(min_length=1)


class ThreadOpenOut(BaseModel):
    title: str = Field(min_length=1, max_length=200)
    why: Why = ""
    raised_by: Annotated[list[Id], Items(100), Field(min_length=1)]


class ThreadTouchOut(BaseModel):
    id: Id
    note: Why = ""
    memories: Ids = []


class ThreadCloseOut(BaseModel):
    id: Id
    status: Literal["resolved", "dropped"]
    why: Why = ""


class Digest(BaseModel):
    reweigh: Annotated[list[ReweighOut], Items(100)] = []
    self_concept: Annotated[list[SelfConceptOut], Items(10)] = []
    conflicts: Annotated[list[ConflictOut], Items(MAX_ITEMS)] = []
    fact_conflicts: Annotated[list[FactConflictOut], Items(MAX_ITEMS)] = []
    threads_open: Annotated[list[ThreadOpenOut], Items(10)] = []
    threads_touch: Annotated[list[ThreadTouchOut], Items(MAX_ITEMS)] = []
    threads_close: Annotated[list[ThreadCloseOut], Items(MAX_ITEMS)] = []


class DriftOut(BaseModel):
    found: bool = False
    connection: Text = ""
    gesture: str = Field("", max_length=MAX_GESTURE)
    emotional: int = Field(2, ge=1, le=5)
    unresolved: int = Field(2, ge=1, le=5)
    tags: Tags = []


class DreamOut(BaseModel):
    symbols: list[Annotated[str, Field(max_length=200)]] = Field(min_length=3, max_length=5)
    story: Text = Field(min_length=1)
    reflection: Text = Field(min_length=1)
    emotional: int = Field(3, ge=1, le=5)
    unresolved: int = Field(2, ge=1, le=5)
