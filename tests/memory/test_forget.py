"""Forgetting: shown first, erased with confirm; the words, vectors and search rows go, a tombstone
keeps the id, time and reason so links, traces and evidence read "[forgotten]". Corrections by
`supersedes`: the old narrative leaves search and injection and stays traceable."""

from __future__ import annotations

from pathlib import Path

import pytest

from tideline.app import Tideline, memory_policies
from tideline.clock import system_clock
from tideline.config import DEFAULTS
from tideline.embed import CachedEmbedder, Embedder, text_hash
from tideline.errors import InvalidInput, NotFound
from tideline.memory import FORGOTTEN, Memory
from tideline.profile import FactDraft
from tideline.search import query_vector

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines

DATA = Path(__file__).resolve().parents[1] / "data"
LENA = "claude/9a8b7c6d-0000-4000-8000-00000000beef"


def lena_turns(memory: Memory) -> list[int]:
    sid = memory.raw.session_id(LENA)
    assert sid is not None
    return [t.id for t in memory.session_turns(sid)]


def test_forget_by_query_shows_first_then_erases_everything_but_a_tombstone(app: Tideline) -> None:
    memory = app.memory
    memory.import_file(DATA / "claude" / "conversations.json")
    said, answered = lena_turns(memory)
    note = memory.write(
        gesture="The user's sister Lena starts a hospital job in Graz",
        tags=["family"],
        source_links=[said],
    )
    cs = app.profile.read().changeset()
    cs.add_fact(FactDraft("Lena", "job", "hospital in Graz"), turn_ids=(said,))
    fact_id = next(iter(app.profile.apply(cs).ids.values()))

    preview = memory.forget(query="Lena", why="the user asked")
    assert not preview.done
    assert sorted(t.id for t in preview.turns) == [said, answered]
    assert [n.id for n in preview.narratives] == [note.id]
    assert memory.search("Lena Graz", include_turns=True, mode="lex").hits  # nothing changed yet

    done = memory.forget(query="Lena", why="the user asked", confirm=True)
    assert done.done
    gone = {("turn", said), ("turn", answered), ("narrative", note.id)}
    for mode in ("lex", "hybrid", "vec"):
        hits = memory.search("Lena sister hospital Graz", include_turns=True, mode=mode).hits
        assert not gone & {(h.type, h.id) for h in hits}
        assert not [h for h in hits if "Lena" in h.text]
    assert memory.search("Lena", include_turns=True, mode="lex").hits == []
    # the words are gone from every table and index, not only hidden
    assert memory.db.scalar("SELECT count(*) FROM turns WHERE text LIKE '%Lena%'") == 0
    assert memory.db.scalar("SELECT count(*) FROM narratives WHERE gesture LIKE '%Lena%'") == 0
    assert (
        memory.db.scalar("SELECT count(*) FROM narrative_tags WHERE narrative_id = ?", (note.id,))
        == 0
    )
    for index, ids in ((memory.raw.index, {said, answered}), (memory.narratives.index, {note.id})):
        assert not ids & (index.text_ids() | index.vector_ids())
    assert memory.pending_vectors() == 0  # tombstones are never embedded again
    # ... while the ids, times and reasons stay, so links and traces read "forgotten"
    trace = memory.trace(note.id)
    assert (trace.narrative.gesture, trace.narrative.forgotten_why) == (FORGOTTEN, "the user asked")
    shown = [(tt.turn.id, tt.turn.text, tt.source) for tt in trace.windows[0]]
    assert shown == [(said, FORGOTTEN, True), (answered, FORGOTTEN, False)]
    evidence = app.profile.fact(fact_id).evidence
    assert [(e.turn_id, e.text) for e in evidence] == [(said, FORGOTTEN)]
    assert app.profile.fact(fact_id).value == "hospital in Graz"  # facts keep their own rule
    stats = memory.stats()
    assert (stats["forgotten_turns"], stats["forgotten_narratives"]) == (2, 1)
    again = memory.forget(query="Lena", confirm=True)
    assert again.empty  # nothing left to forget


def test_forget_a_session_turns_and_narratives_by_id(memory: Memory) -> None:
    memory.import_file(DATA / "claude" / "conversations.json")
    keep = memory.sync_turn("walk", "user", "The dog walk is at seven")
    plan = memory.forget(session=LENA)
    assert [s["turns"] for s in plan.sessions] == [2]
    memory.forget(session=LENA, confirm=True)
    assert LENA not in {s["key"] for s in memory.sessions()}
    assert memory.raw.session_id(LENA) is None  # its key is gone too
    assert memory.sync_turn(LENA, "user", "a new start").created  # the key is free again

    n = memory.write(gesture="A walk at seven", source_links=[keep.id])
    done = memory.forget(turns=[keep.id], narratives=[n.id], confirm=True)
    assert ([t.id for t in done.turns], [x.id for x in done.narratives]) == ([keep.id], [n.id])
    assert memory.raw.get([keep.id])[0].forgotten_why == "asked to forget"
    with pytest.raises(NotFound, match="turn 99999 does not exist"):
        memory.forget(turns=[99999])
    with pytest.raises(NotFound, match="session 'nope' does not exist"):
        memory.forget(session="nope")
    with pytest.raises(InvalidInput, match="no word of 3 or more characters"):
        memory.forget(query="a b")
    with pytest.raises(InvalidInput, match="nothing named to forget"):
        memory.forget()


def test_a_forgotten_turns_words_leave_its_neighbours_context_keys(memory: Memory) -> None:
    """BM25 sees a turn with its neighbours' words: forgetting one must take its words out of
    the turns around it too, and an imported tombstone gets no search row at all."""
    for text in ("Morning.", "My PIN hint is zanzibar", "Noted.", "See you"):
        memory.sync_turn("chat", "user", text)
    hits = memory.search("zanzibar", include_turns=True, mode="lex").hits
    pin = next(h.id for h in hits if "zanzibar" in h.text)
    assert len(hits) > 1  # its neighbours are found by its words
    memory.forget(turns=[pin], why="private", confirm=True)
    assert memory.search("zanzibar", include_turns=True, mode="lex").hits == []
    assert memory.raw.index.text_ids() == set(memory.raw.ids())


def test_a_superseded_narrative_leaves_search_and_injection_but_stays_traceable(
    app: Tideline,
) -> None:
    memory = app.memory
    t = memory.sync_turn("s", "user", "I moved to Lisbon last spring")
    old = memory.write(
        gesture="The user lives in Lisbon", importance=5, tags=["home"], source_links=[t.id]
    )
    new = memory.write(
        gesture="The user lives in Porto, not Lisbon", importance=5, supersedes=old.id
    )
    assert new.supersedes == old.id
    for mode in ("lex", "hybrid", "vec"):
        assert old.id not in [h.id for h in memory.search("user lives", mode=mode).hits]
    assert [n.id for n in memory.narratives.pool(0.0, 10, None)] == [new.id]
    lisbon = query_vector(app.embedder, "Lisbon")[0]
    assert lisbon is not None and [h.id for h in memory.narratives.index.vector(lisbon, 5)] == [
        new.id
    ]
    trace = memory.trace(old.id)
    assert (trace.narrative.superseded_by, trace.narrative.gesture) == (new.id, old.gesture)
    assert trace.windows[0][0].turn.id == t.id
    with pytest.raises(InvalidInput, match=f"already superseded by {new.id}"):
        memory.write(gesture="again", supersedes=old.id)
    with pytest.raises(NotFound, match="narrative 404 does not exist"):
        memory.write(gesture="wrong", supersedes=404)
    assert memory.stats()["superseded_narratives"] == 1
    assert memory.stats()["narratives"] == 1


def test_forgotten_words_leave_no_vector_in_the_shared_embedding_cache(
    app: Tideline, e5: Embedder, tmp_path: Path
) -> None:
    cached = CachedEmbedder(e5, tmp_path / "cache.db")
    memory = Memory(
        app.db, cached, lock=app.db_lock, **memory_policies(DEFAULTS), clock=system_clock
    )
    said = memory.sync_turn("s", "user", "My locker code is 3141", speaker="Ana")
    kept = memory.sync_turn("s", "user", "The gym opens at six", speaker="Ana")

    def cached_hashes() -> set[bytes]:
        return {r[0] for r in cached.db.execute("SELECT hash FROM embeddings WHERE kind = 'd'")}

    assert {text_hash("Ana: My locker code is 3141"), text_hash("Ana: The gym opens at six")} <= (
        cached_hashes()
    )
    memory.forget(turns=[said.id], confirm=True)
    assert text_hash("Ana: My locker code is 3141") not in cached_hashes()
    assert text_hash("Ana: The gym opens at six") in cached_hashes()
    assert memory.raw.get([kept.id])[0].text == "The gym opens at six"
    cached.close()
