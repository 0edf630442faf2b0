"""Every importer, fed arbitrary bytes and JSON of the right shape with wrong values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import any_char, fuzz, only_tideline_errors
from tideline.app import Tideline

FORMATS = ("openai", "transcript", "locomo", "mcp-memory", "mem0", "letta", "tideline")

#: Any JSON value, strings with lone surrogates (`\ud800` escapes) and huge numbers included.
json_value = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.integers(min_value=2**63),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(any_char, max_size=20),
        st.sampled_from(["", " ", "user", "assistant", "1:56 pm on 8 May, 2023", "2026-05-01"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(any_char, max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)


def _object(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """An object whose keys are the ones an importer looks for, with any values."""
    return st.dictionaries(st.sampled_from(keys), json_value, max_size=len(keys))


_MESSAGE = ["role", "content", "name", "timestamp", "created_at", "id", "type", "text"]
openai_doc = st.one_of(
    st.lists(_object(_MESSAGE), max_size=4),
    st.fixed_dictionaries({"messages": st.lists(_object(_MESSAGE), max_size=4)}),
    json_value,
)
transcript_line = st.one_of(
    _object([*_MESSAGE, "message", "sessionId", "session_id", "uuid"]),
    st.fixed_dictionaries({"type": st.just("user"), "message": _object(_MESSAGE)}),
    json_value,
)
_TURN = ["speaker", "text", "dia_id", "blip_caption"]
locomo_doc = st.one_of(
    st.builds(
        lambda conv, sessions: {**conv, **sessions},
        _object(["speaker_a", "speaker_b", "sample_id", "conversation"]),
        st.dictionaries(
            st.sampled_from(
                [
                    "session_1",
                    "session_2",
                    "session_01",
                    "session_1_date_time",
                    "session_2_date_time",
                    "session_99999999999",
                ]
            ),
            st.one_of(st.lists(_object(_TURN), max_size=3), json_value),
            max_size=4,
        ),
    ),
    json_value,
)
#: Valid JSON that Python's json module cannot hold, and files that are barely JSON.
extreme = st.sampled_from(
    [b"[" * 100_000, b"{" * 100_000, b'{"a":' * 50_000, b"1" * 5000, b"\xff\xfe", b"", b"\x00" * 10]
)


def _import(app: Tideline, tmp: Path, fmt: str, data: bytes) -> None:
    path = tmp / f"fuzz-{fmt}.json"
    path.write_bytes(data)
    only_tideline_errors(lambda: app.memory.import_file(path, fmt))


@fuzz(900)
@given(st.sampled_from(FORMATS), st.one_of(st.binary(max_size=300), extreme))
def test_arbitrary_bytes(agent: Tideline, tmp_path_factory: Any, fmt: str, data: bytes) -> None:
    _import(agent, tmp_path_factory.getbasetemp(), fmt, data)


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True).encode()  # `\udXXX` escapes for lone surrogates


@fuzz(600)
@given(openai_doc)
def test_openai_structured(agent: Tideline, tmp_path_factory: Any, doc: Any) -> None:
    _import(agent, tmp_path_factory.getbasetemp(), "openai", _dump(doc))


@fuzz(600)
@given(st.lists(transcript_line, max_size=5))
def test_transcript_structured(agent: Tideline, tmp_path_factory: Any, lines: list[Any]) -> None:
    data = b"\n".join(_dump(line) for line in lines)
    _import(agent, tmp_path_factory.getbasetemp(), "transcript", data)


@fuzz(600)
@given(locomo_doc)
def test_locomo_structured(agent: Tideline, tmp_path_factory: Any, doc: Any) -> None:
    _import(agent, tmp_path_factory.getbasetemp(), "locomo", _dump(doc))


def _some(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=dict.fromkeys(keys, json_value))


_FACT = [
    "id", "subject", "category", "value", "status", "confidence", "prior", "source_type",
    "mention_count", "decay_days", "expires_at", "valid_from", "valid_to", "last_seen_at",
    "supersedes", "merged_into", "rejected_why", "created_at", "updated_at", "retired_at",
]  # fmt: skip
_EVIDENCE = ["turn", "polarity", "said_at", "created_at", "observation_id"]
_KINDS = ["edge", "event", "relationship", "strategy", "observation", "user_model", "trajectory"]
_PROFILE = [
    "id", "kind", "from_fact", "to_fact", "removed_at", "title", "importance", "decay_days",
    "closed_at", "said_at", "phrase", "name", "relation", "mention_count", "history",
    "first_seen_at", "last_seen_at", "observation_type", "turns", "text", "about", "question",
    "fact_id", "outcome", "dimension", "value", "evidence", "made_at", "anchors", "phase",
    "sessions_since", "session_id",
]  # fmt: skip
#: A peer's memory or a backup's facts, right in shape and wrong in every value.
peer_file = st.one_of(
    st.lists(
        st.builds(
            lambda kind, rest: {"type": kind, **rest},
            st.sampled_from(["entity", "relation"]),
            _some(["name", "entityType", "observations", "from", "to", "relationType"]),
        ),
        max_size=4,
    ).map(lambda lines: ("mcp-memory", b"\n".join(_dump(line) for line in lines))),
    st.lists(
        _some(["id", "memory", "user_id", "agent_id", "run_id", "categories", "metadata"]).map(
            lambda m: {"memory": "kept", "created_at": "2025-01-01", **m}
        ),
        max_size=4,
    ).map(lambda doc: ("mem0", _dump(doc))),
    st.fixed_dictionaries(
        {
            "agents": st.lists(
                _some(["name", "id", "block_ids", "core_memory"])
                | st.fixed_dictionaries(
                    {"messages": st.lists(_object([*_MESSAGE, "tool_calls"]), max_size=3)}
                ),
                max_size=2,
            ),
            "blocks": st.lists(_some(["id", "label", "value"]), max_size=3),
        }
    ).map(lambda doc: ("letta", _dump(doc))),
    st.lists(
        st.builds(
            lambda fact, evidence, changes: {
                "type": "fact",
                **fact,
                "evidence": evidence,
                "changes": changes,
            },
            _some(_FACT),
            st.lists(_some(_EVIDENCE), max_size=2) | json_value,
            st.lists(_some(["from_status", "to_status", "at", "why", "recorded_at"]), max_size=2)
            | json_value,
        )
        | st.builds(
            lambda kind, rest: {"type": kind, **rest},
            st.sampled_from(_KINDS),
            _some([*_PROFILE, "created_at", "valid_from", "valid_to", "status", "details"]),
        ),
        max_size=3,
    ).map(
        lambda facts: (
            "tideline",
            b"\n".join(_dump(line) for line in [{"type": "tideline-export", "version": 2}, *facts]),
        )
    ),
)


@fuzz(100)
@given(peer_file)
def test_peer_memories_structured(
    agent: Tideline, tmp_path_factory: Any, found: tuple[str, bytes]
) -> None:
    _import(agent, tmp_path_factory.getbasetemp(), *found)
