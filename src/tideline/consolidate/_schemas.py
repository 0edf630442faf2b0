"""What each LLM step must answer: pydantic models, validated by the LLM client (one repair).

Fields are lenient where a model is likely to vary (defaults, optional lists) and strict where a
wrong value would corrupt the profile (types, ranges, the vocabularies of the profile). Every
limit the profile enforces on what a step writes is declared here too, so it is in the schema the
model sees and a wrong answer gets the repair request naming it: text lengths (the profile's
`MAX_NAME`, `MAX_TEXT`), id ranges, decay up to a century, and how many items one answer may
hold (`Items`: more are cut, recorded, never a failure).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from tideline.llm import Items
from tideline.profile import MAX_NAME, MAX_TEXT
from tideline.store import MAX_ID

ObservationType = Literal["statement", "contradiction", "preference", "behaviour", "other"]
EdgeKind = Literal["causes", "related_to", "supports", "contradicts", "temporal", "hierarchy"]

Name = Annotated[str, Field(max_length=MAX_NAME)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Why = Annotated[str, Field(max_length=2000)]  # a reason or a question the profile stores
Tag = Annotated[str, Field(max_length=64)]
TurnId = Annotated[int, Field(ge=1, le=MAX_ID)]
FactId = Annotated[int, Field(ge=-MAX_ID, le=MAX_ID)]  # new facts of a run are negative
Index = Annotated[int, Field(ge=1, le=10_000)]  # 1-based, into a list the prompt numbered
DecayDays = Annotated[int, Field(ge=1, le=36_500)]

MAX_OBSERVATIONS = 60  # per extraction answer (one session, or one chunk of a long one)
MAX_ITEMS = 30  # people, events, inferred facts per answer
MAX_LINKS = 50  # turns or observations one item cites


class ObservationOut(BaseModel):
    type: ObservationType
    topic: Name = ""
    text: Text = Field(min_length=1)
    about: Name = "user"
    turns: Annotated[list[TurnId], Items(MAX_LINKS)] = []


class PersonOut(BaseModel):
    name: Name = Field(min_length=1)
    relation: Name = ""
    details: Text = ""
    status: Name | None = None


class EventOut(BaseModel):
    title: Name = Field(min_length=1)
    details: Text = ""
    importance: int = Field(3, ge=1, le=5)
    decay_days: DecayDays | None = 30
    turns: Annotated[list[TurnId], Items(MAX_LINKS)] = []
    when: Name = ""  # the time expression as said ("last weekend"), read against its turn


class Extraction(BaseModel):
    tool_only: bool = False
    summary: Annotated[str, Field(max_length=2000)] = ""
    tags: Annotated[list[Tag], Items(8)] = []
    observations: Annotated[list[ObservationOut], Items(MAX_OBSERVATIONS)] = []
    relationships: Annotated[list[PersonOut], Items(MAX_ITEMS)] = []
    events: Annotated[list[EventOut], Items(MAX_ITEMS)] = []


class InferredOut(BaseModel):
    category: Name = Field(min_length=1)
    value: Text = Field(min_length=1)
    observations: Annotated[list[Index], Items(MAX_LINKS)] = []
    confidence: float = Field(0.5, ge=0, le=1)
    question: Why = ""


class Behaviour(BaseModel):
    facts: Annotated[list[InferredOut], Items(MAX_ITEMS)] = []


class Decision(BaseModel):
    observation: Index
    action: Literal["support", "contradict", "evidence_against", "new"]
    fact_id: FactId | None = None
    earlier: Index | None = None  # an earlier observation of the list whose fact this one is about
    subject: Name = ""
    category: Name = ""
    value: Text = ""
    decay_days: DecayDays | None = None
    confidence: float = Field(0.5, ge=0, le=1)


class Classification(BaseModel):
    decisions: Annotated[list[Decision], Items(80)] = []  # a batch is 40 observations


class Verdict(BaseModel):
    fact_id: FactId
    verdict: Literal["confirm", "keep"]
    why: Why = ""


class Verification(BaseModel):
    verdicts: Annotated[list[Verdict], Items(80)] = []  # at most 80 facts are asked about


class Ruling(BaseModel):
    new_fact_id: FactId
    decision: Literal["accept_new", "reject_new"]
    why: Why = ""


class Arbitration(BaseModel):
    decisions: Annotated[list[Ruling], Items(100)] = []


class EdgeOut(BaseModel):
    kind: EdgeKind
    from_fact: FactId
    to_fact: FactId


class Edges(BaseModel):
    edges: Annotated[list[EdgeOut], Items(100)] = []


class DimensionOut(BaseModel):
    dimension: str = Field(min_length=1, max_length=100)
    value: Why = Field(min_length=1)
    evidence: Annotated[list[TurnId], Items(MAX_LINKS)] = []


class UserModelOut(BaseModel):
    dimensions: Annotated[list[DimensionOut], Items(20)] = []


class TrajectoryOut(BaseModel):
    phase: Name = ""
    direction: Name = ""
    stability: Name = ""
    anchors: Annotated[list[FactId], Items(20)] = []
    unstable_areas: Annotated[list[Name], Items(10)] = []
    momentum: Why = ""


class SummaryOut(BaseModel):
    summary: Text
