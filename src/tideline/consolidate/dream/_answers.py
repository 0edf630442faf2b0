"""What each dream layer's model must answer: pydantic models, validated by the LLM client.

Ranges are enforced here (1–5 scores, 3–5 symbols); whether an id is one the model was shown is
checked by the layer, which refuses what it was not given.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class MemoryOut(BaseModel):
    gesture: str = Field(min_length=1, max_length=500)
    context: str = ""
    cognition_direction: str = ""
    importance: int = Field(3, ge=1, le=5)
    emotional: int = Field(3, ge=1, le=5)
    unresolved: int = Field(1, ge=1, le=5)
    tags: list[str] = []
    entities_role: str = ""
    related_entities: list[str] = []
    source_links: list[int] = []


class LinkOut(BaseModel):
    narrative: int
    turns: list[int]


class Solidified(BaseModel):
    memories: list[MemoryOut] = []
    links: list[LinkOut] = []


class ReweighOut(BaseModel):
    id: int
    importance: int | None = Field(None, ge=1, le=5)
    emotional: int | None = Field(None, ge=1, le=5)
    unresolved: int | None = Field(None, ge=1, le=5)
    why: str = ""


class SelfConceptOut(BaseModel):
    text: str = Field(min_length=1, max_length=500)
    context: str = ""
    rests_on: list[int] = Field(min_length=1)
    importance: int = Field(3, ge=1, le=5)
    emotional: int = Field(2, ge=1, le=5)
    unresolved: int = Field(1, ge=1, le=5)


class ConflictOut(BaseModel):
    a: int
    b: int
    why: str = ""


class FactConflictOut(BaseModel):
    memory: int
    fact_id: int
    question: str = Field(min_length=1)


class ThreadOpenOut(BaseModel):
    title: str = Field(min_length=1)
    why: str = ""
    raised_by: list[int] = Field(min_length=1)


class ThreadTouchOut(BaseModel):
    id: int
    note: str = ""
    memories: list[int] = []


class ThreadCloseOut(BaseModel):
    id: int
    status: Literal["resolved", "dropped"]
    why: str = ""


class Digest(BaseModel):
    reweigh: list[ReweighOut] = []
    self_concept: list[SelfConceptOut] = []
    conflicts: list[ConflictOut] = []
    fact_conflicts: list[FactConflictOut] = []
    threads_open: list[ThreadOpenOut] = []
    threads_touch: list[ThreadTouchOut] = []
    threads_close: list[ThreadCloseOut] = []


class DriftOut(BaseModel):
    found: bool = False
    connection: str = ""
    gesture: str = Field("", max_length=500)
    emotional: int = Field(2, ge=1, le=5)
    unresolved: int = Field(2, ge=1, le=5)
    tags: list[str] = []


class DreamOut(BaseModel):
    symbols: list[str] = Field(min_length=3, max_length=5)
    story: str = Field(min_length=1)
    reflection: str = Field(min_length=1)
    emotional: int = Field(3, ge=1, le=5)
    unresolved: int = Field(2, ge=1, le=5)
