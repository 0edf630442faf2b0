"""What each LLM step must answer: pydantic models, validated by the LLM client (one repair).

Fields are lenient where a model is likely to vary (defaults, optional lists) and strict where a
wrong value would corrupt the profile (types, ranges, the vocabularies of the profile).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

ObservationType = Literal["statement", "contradiction", "preference", "behaviour", "other"]
EdgeKind = Literal["causes", "related_to", "supports", "contradicts", "temporal", "hierarchy"]


class ObservationOut(BaseModel):
    type: ObservationType
    topic: str = ""
    text: str = Field(min_length=1)
    about: str = "user"
    turns: list[int] = []


class PersonOut(BaseModel):
    name: str = Field(min_length=1)
    relation: str = ""
    details: str = ""
    status: str | None = None


class EventOut(BaseModel):
    title: str = Field(min_length=1)
    details: str = ""
    importance: int = Field(3, ge=1, le=5)
    decay_days: int | None = Field(30, ge=1)
    turns: list[int] = []


class Extraction(BaseModel):
    tool_only: bool = False
    summary: str = ""
    tags: list[str] = []
    observations: list[ObservationOut] = []
    relationships: list[PersonOut] = []
    events: list[EventOut] = []


class InferredOut(BaseModel):
    category: str = Field(min_length=1)
    value: str = Field(min_length=1)
    observations: list[int] = []
    confidence: float = Field(0.5, ge=0, le=1)
    question: str = ""


class Behaviour(BaseModel):
    facts: list[InferredOut] = []


class Decision(BaseModel):
    observation: int
    action: Literal["support", "contradict", "evidence_against", "new"]
    fact_id: int | None = None
    subject: str = ""
    category: str = ""
    value: str = ""
    decay_days: int | None = Field(None, ge=1)
    confidence: float = Field(0.5, ge=0, le=1)


class Classification(BaseModel):
    decisions: list[Decision] = []


class Verdict(BaseModel):
    fact_id: int
    verdict: Literal["confirm", "keep"]
    why: str = ""


class Verification(BaseModel):
    verdicts: list[Verdict] = []


class Ruling(BaseModel):
    new_fact_id: int
    decision: Literal["accept_new", "reject_new"]
    why: str = ""


class Arbitration(BaseModel):
    decisions: list[Ruling] = []


class EdgeOut(BaseModel):
    kind: EdgeKind
    from_fact: int
    to_fact: int


class Edges(BaseModel):
    edges: list[EdgeOut] = []


class DimensionOut(BaseModel):
    dimension: str = Field(min_length=1, max_length=100)
    value: str = Field(min_length=1)
    evidence: list[int] = []


class UserModelOut(BaseModel):
    dimensions: list[DimensionOut] = []


class TrajectoryOut(BaseModel):
    phase: str = ""
    direction: str = ""
    stability: str = ""
    anchors: list[int] = []
    unstable_areas: list[str] = []
    momentum: str = ""


class SummaryOut(BaseModel):
    summary: str
