"""Result types of the memory API. Each has `to_dict()` for JSON drivers (CLI, MCP)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

#: What a forgotten turn or narrative reads as wherever it is still shown (trace, evidence).
FORGOTTEN = "[forgotten]"


@dataclass
class _Dict:
    """A result as JSON (a field-less dataclass, so `asdict` knows `self` is one)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TurnResult(_Dict):
    """What `sync_turn` did: `created` is False when the turn was already stored."""

    id: int
    session_id: int
    created: bool
    replayed: bool = False  # the first answer to this idempotency key, sent again


@dataclass
class Turn(_Dict):
    id: int
    session_id: int
    session: str
    seq: int
    role: str
    speaker: str | None
    text: str
    ts: str
    external_id: str | None = None
    forgotten_at: str | None = None  # a tombstone: the words are gone, the id and time stay
    forgotten_why: str | None = None


@dataclass
class Narrative(_Dict):
    id: int
    gesture: str
    context: str
    cognition_direction: str
    importance: int
    emotional: int
    recurrence: int
    unresolved: int
    weight: float
    kind: str
    tags: list[str]
    entities_role: str
    related_entities: list[str]
    source_links: list[int]
    created_at: str
    updated_at: str
    supersedes: int | None = None  # the narrative this one corrects
    superseded_by: int | None = None  # set: out of search and injection, still traceable
    forgotten_at: str | None = None  # a tombstone: the words are gone, the id and time stay
    forgotten_why: str | None = None
    recorded_at: str | None = None  # record time: when Tideline wrote it (created_at: valid time)
    retired_at: str | None = None  # record time: when it was superseded or forgotten
    replayed: bool = False  # a write's answer sent again for its idempotency key


@dataclass
class TraceTurn(_Dict):
    """A turn in a trace window; `source` marks the turns the narrative links to."""

    turn: Turn
    source: bool


@dataclass
class Trace(_Dict):
    narrative: Narrative
    windows: list[list[TraceTurn]]


@dataclass
class ImportProblem(_Dict):
    line: int | None
    message: str


@dataclass(frozen=True)
class ImportedFact:
    """A fact a peer's memory held (an MCP memory observation, a mem0 memory, a line of a Letta
    memory block): about `subject` ("user", "self" or a name), as the file said it. It is kept
    in the profile with its turn as evidence, dated by that turn (`FoundFact`)."""

    subject: str
    category: str
    value: str


@dataclass(frozen=True)
class FoundFact:
    """An imported fact with the stored turn that backs it and that turn's time (None: the
    file said nothing of when; the profile dates it by the turn)."""

    fact: ImportedFact
    turn_id: int
    said_at: str | None


@dataclass
class RestoredRecords:
    """What the profile did with a Tideline export's records (`Profile.restore`), by kind:
    added, already there; what it did not take back (by what a person reads: "snapshot
    records (rebuilt …)"); evidence rows whose turn is not in this home; the problems of the
    records it left out."""

    added: Counter[str] = field(default_factory=Counter)
    existing: Counter[str] = field(default_factory=Counter)
    not_restored: Counter[str] = field(default_factory=Counter)
    evidence_left_out: int = 0
    problems: list[ImportProblem] = field(default_factory=list)


@dataclass
class ImportSummary(_Dict):
    """What an import did. `detected`: the format was chosen by `--format auto`;
    `skipped_kinds`: what was left out on purpose (system messages, images, …) and how often;
    `refused`: what was left out for breaking a rule, each one a problem; `undated`: turns
    dated at import time, as nothing in the file said when they were said; `profile_added`,
    `profile_existing`: a backup's profile records other than facts, by kind."""

    path: str
    format: str
    detected: bool = False
    sessions: int = 0
    turns_added: int = 0
    turns_existing: int = 0
    narratives_added: int = 0
    narratives_existing: int = 0
    facts_added: int = 0
    facts_existing: int = 0
    profile_added: dict[str, int] = field(default_factory=dict)
    profile_existing: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    skipped_kinds: dict[str, int] = field(default_factory=dict)
    refused: int = 0
    undated: int = 0
    problems: list[ImportProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def left_out(self) -> int:
        """Records of the file not imported: on purpose (`skipped`) or refused."""
        return self.skipped + self.refused

    @property
    def found(self) -> int:
        """Records the file held that memory could keep (new or already there)."""
        return (
            self.turns_added
            + self.turns_existing
            + self.narratives_added
            + self.narratives_existing
            + self.facts_added
            + self.facts_existing
            + sum(self.profile_added.values())
            + sum(self.profile_existing.values())
        )


@dataclass
class Forgetting(_Dict):
    """What `forget` will erase (a preview) or erased (`done`): turns, narratives, sessions."""

    turns: list[Turn] = field(default_factory=list)
    narratives: list[Narrative] = field(default_factory=list)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    why: str = ""
    done: bool = False

    @property
    def empty(self) -> bool:
        return not (self.turns or self.narratives or self.sessions)
