"""The REST API under /api: every service the MCP tools expose, plus sleep and dream runs.

Each route maps its query or JSON body (a model built from `tideline.fields`, so bounds and
defaults are the CLI's and the MCP tools') onto the app's services and returns their JSON, the
same objects the MCP tools return. Nothing is assembled here: the services are `Tideline`'s.
Reads are GET; writes are POST and need the token when one is configured (the guard) and, from
a browser with the panel's cookies, the CSRF header.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header

from tideline.consolidate import STEPS
from tideline.consolidate.dream import LAYER_NAMES, choose_layers
from tideline.errors import InvalidInput, NotFound
from tideline.fields import (
    ATTENTION_HEATMAP,
    DREAM_RUN,
    FACT_CLOSE,
    FACT_REJECT,
    MEMO_READ,
    MEMO_REINDEX,
    MEMO_ROUTE,
    MEMO_SEARCH,
    MEMO_STATUS,
    MEMO_WRITE,
    MEMORY_CONTEXT,
    MEMORY_FORGET,
    MEMORY_PROFILE,
    MEMORY_SEARCH,
    MEMORY_TRACE,
    MEMORY_WRITE,
    PREFETCH,
    RUNS,
    SCAN_UNINDEXED,
    SESSIONS,
    SLEEP_RUN,
    SYNC_TURN,
)
from tideline.serve import CALLS, names, to_dict
from tideline.web import _csrf
from tideline.web._graph import graph
from tideline.web._models import Args, RecordId, body, query
from tideline.web._names import API
from tideline.web._state import Web, web

router = APIRouter(prefix=API, dependencies=[Depends(_csrf.check_api)])
W = Annotated[Web, Depends(web)]
Json = dict[str, Any]

SearchArgs = Annotated[Args, Depends(query(MEMORY_SEARCH))]
TraceArgs = Annotated[Args, Depends(query(MEMORY_TRACE, "narrative_id"))]
SessionsArgs = Annotated[Args, Depends(query(SESSIONS))]
TurnBody = Annotated[Args, Depends(body(SYNC_TURN))]
WriteBody = Annotated[Args, Depends(body(MEMORY_WRITE))]
ForgetBody = Annotated[Args, Depends(body(MEMORY_FORGET))]
HeatmapArgs = Annotated[Args, Depends(query(ATTENTION_HEATMAP))]
ScanArgs = Annotated[Args, Depends(query(SCAN_UNINDEXED))]
ContextBody = Annotated[Args, Depends(body(MEMORY_CONTEXT))]
PrefetchArgs = Annotated[Args, Depends(query(PREFETCH))]
ProfileArgs = Annotated[Args, Depends(query(MEMORY_PROFILE))]
RejectBody = Annotated[Args, Depends(body(FACT_REJECT, "fact_id"))]
CloseBody = Annotated[Args, Depends(body(FACT_CLOSE, "fact_id"))]
LibSearchArgs = Annotated[Args, Depends(query(MEMO_SEARCH))]
LibStatusArgs = Annotated[Args, Depends(query(MEMO_STATUS))]
LibRouteArgs = Annotated[Args, Depends(query(MEMO_ROUTE))]
LibReadArgs = Annotated[Args, Depends(query(MEMO_READ))]
ReindexBody = Annotated[Args, Depends(body(MEMO_REINDEX))]
NoteBody = Annotated[Args, Depends(body(MEMO_WRITE))]
SleepBody = Annotated[Args, Depends(body(SLEEP_RUN))]
DreamBody = Annotated[Args, Depends(body(DREAM_RUN))]
RunsArgs = Annotated[Args, Depends(query(RUNS))]
Id = RecordId
IdempotencyHeader = Annotated[str | None, Header(alias="Idempotency-Key")]


# -- memory ----------------------------------------------------------------------------------
@router.get("/search", tags=["memory"])
def search(w: W, q: SearchArgs) -> Json:
    """Memories and raw turns (not with include_turns=false) best first, with the parts of
    each score."""
    args = q
    args["tags"] = names(args["tags"])
    return _searched(to_dict(w.app.memory.search(**args)))


@router.get("/narratives/{narrative_id}/trace", tags=["memory"])
def trace(w: W, narrative_id: Id, q: TraceArgs) -> Json:
    """A narrative's source turns, each with its neighbours: where the memory came from."""
    return CALLS["memory_trace"](w.app, narrative_id=narrative_id, **q)


def keyed(args: Json, header: str | None) -> Json:
    """The body's arguments with the write's idempotency key: the body's `idempotency_key` or
    the `Idempotency-Key` header (both: they must agree)."""
    given = args.get("idempotency_key")
    if header is not None and given is not None and header != given:
        raise InvalidInput(
            "the Idempotency-Key header and the body's idempotency_key differ; send one key"
        )
    return {**args, "idempotency_key": given if given is not None else header}


@router.post("/narratives", tags=["memory"], status_code=201)
def write(w: W, given: WriteBody, key: IdempotencyHeader = None) -> Json:
    """Write a narrative memory (`memory_write`); retry with the same idempotency key."""
    return CALLS["memory_write"](w.app, **keyed(given, key))


@router.post("/turns", tags=["memory"])
def sync_turn(w: W, given: TurnBody, key: IdempotencyHeader = None) -> Json:
    """Keep one conversation turn, word for word (idempotent: `created` says if it was new)."""
    return CALLS["sync_turn"](w.app, **keyed(given, key))


@router.get("/stats", tags=["memory"])
def stats(w: W) -> Json:
    """How much is remembered: sessions, turns, narratives by kind, vectors, the embedder."""
    return CALLS["memory_stats"](w.app)


@router.get("/sessions", tags=["memory"])
def sessions(w: W, q: SessionsArgs) -> Json:
    """The sessions, most recent first, with their turn counts."""
    return {"sessions": w.app.memory.sessions(q["limit"])}


@router.get("/sessions/{session:path}/turns", tags=["memory"])
def session_turns(w: W, session: str) -> Json:
    """A session's turns, oldest first. The key may hold `/`, sent as is or as %2F
    (`/api/sessions/openai/chat/turns`, `/api/sessions/openai%2Fchat/turns`)."""
    turns = w.app.memory.session_turns(session)
    if not turns:
        raise NotFound(f"session {session!r} has no turns; list sessions with GET {API}/sessions")
    return {"session": session, "turns": [t.to_dict() for t in turns]}


@router.post("/forget", tags=["memory"])
def forget(w: W, b: ForgetBody) -> Json:
    """Show what would be forgotten; with confirm=true, erase it (tombstones stay)."""
    return CALLS["memory_forget"](w.app, **b)


# -- script layer ----------------------------------------------------------------------------
@router.get("/heatmap", tags=["analysis"])
def attention(w: W, q: HeatmapArgs) -> Json:
    """Retrieval hits per memory cluster in a window, and the deserts (never retrieved)."""
    return CALLS["memory_attention_heatmap"](w.app, **q)


@router.get("/graph", tags=["analysis"])
def entity_graph(w: W) -> Json:
    """The entity-role graph of the narratives and the profile's fact edges."""
    return graph(w.app)


@router.get("/scan", tags=["analysis"])
def scan(w: W, q: ScanArgs) -> Json:
    """Turns no memory links to yet, in chunks of one sitting (`memory_scan_unindexed`)."""
    return CALLS["memory_scan_unindexed"](w.app, **q)


# -- injection -------------------------------------------------------------------------------
@router.post("/context", tags=["inject"])
def context(w: W, given: ContextBody) -> Json:
    """The identity block, and with a message the turn's block (`memory_context`)."""
    return CALLS["memory_context"](w.app, **given)


@router.get("/prefetch", tags=["inject"])
def prefetch(w: W, q: PrefetchArgs) -> Json:
    """The memory block injected for one message (T1, T4); logs the hits' attention."""
    return w.app.provider.prefetch_block(q["message"], q["session"]).to_dict()


# -- profile ---------------------------------------------------------------------------------
@router.get("/profile", tags=["profile"])
def profile(w: W, q: ProfileArgs) -> Json:
    """Facts with their evidence turns, filtered by status, category and subject; with `as_of`
    (an ISO date or time), the profile as it stood then in the user's time: the facts believed
    then with their status then, and the events, people and open questions of then."""
    return CALLS["memory_profile"](w.app, **q)


@router.get("/facts/{fact_id}", tags=["profile"])
def fact_timeline(w: W, fact_id: Id) -> Json:
    """A fact, its supersedes chain and every status change."""
    return CALLS["fact_timeline"](w.app, fact_id=fact_id)


@router.post("/facts/{fact_id}/reject", tags=["profile"])
def fact_reject(w: W, fact_id: Id, given: RejectBody) -> Json:
    """Mark a fact wrong, with why; it stays, greyed, with the reason on its timeline."""
    return CALLS["fact_reject"](w.app, fact_id=fact_id, **given)


@router.post("/facts/{fact_id}/close", tags=["profile"])
def fact_close(w: W, fact_id: Id, given: CloseBody) -> Json:
    """Mark a fact no longer true; it stays, with an end time."""
    return CALLS["fact_close"](w.app, fact_id=fact_id, **given)


# -- library ---------------------------------------------------------------------------------
@router.get("/library/search", tags=["library"])
def library_search(w: W, q: LibSearchArgs) -> Json:
    """Chunks best first by relevance, each with `location` (path:line) and `explain`."""
    found = w.app.library.search(
        q["query"], q["path"], k=q["k"], mode=q["mode"], min_score=q["min_score"]
    )
    return _searched(to_dict(found))


def _searched(answer: Json) -> Json:
    """A search's answer: an empty list keeps its `reason`, and when the relevance floor left
    results out the reason says how to see them over this API."""
    if not answer.get("hits") and answer.get("left_out"):
        answer["reason"] = f"{answer['reason']}; pass min_score=0 to see them"
    return answer


@router.get("/library/status", tags=["library"])
def library_status(w: W, q: LibStatusArgs) -> Json:
    """Collections, what the index lags behind, and the folders skipped and why."""
    return CALLS["memo_status"](w.app, **q)


@router.get("/library/route", tags=["library"])
def library_route(w: W, q: LibRouteArgs) -> Json:
    """Which collections a question belongs to, best first (`memo_route`)."""
    return CALLS["memo_route"](w.app, **q)


@router.get("/library/read", tags=["library"])
def library_read(w: W, q: LibReadArgs) -> Json:
    """Lines of a note, or the lines of a search hit's `path:line` (`memo_read`)."""
    return CALLS["memo_read"](w.app, **q)


@router.post("/library/reindex", tags=["library"])
def library_reindex(w: W, given: ReindexBody) -> Json:
    """Bring the index up to date with the files, or rebuild it (`memo_reindex`)."""
    return CALLS["memo_reindex"](w.app, **given)


@router.post("/library/notes", tags=["library"], status_code=201)
def library_write(w: W, given: NoteBody, key: IdempotencyHeader = None) -> Json:
    """Create a note in a collection, or append to one, and index it (`memo_write`); retry
    with the same idempotency key."""
    return CALLS["memo_write"](w.app, **keyed(given, key))


# -- runs ------------------------------------------------------------------------------------
@router.post("/sleep", tags=["runs"], status_code=202)
def start_sleep(w: W, given: SleepBody) -> Json:
    """Start a sleep in the background; poll GET /api/runs/{id} for its progress."""
    return start_sleep_run(w, given["dry_run"], given["timeout"])


@router.post("/dream", tags=["runs"], status_code=202)
def start_dream(w: W, given: DreamBody) -> Json:
    """Start a dream (default: today; `layers`: only these) in the background; poll
    GET /api/runs/{id}."""
    return start_dream_run(w, given["date"], given["dry_run"], given["layers"])


@router.get("/runs", tags=["runs"])
def runs(w: W, q: RunsArgs) -> Json:
    """The runs this server started (with progress), and the recorded sleep and dream runs."""
    return {
        "started": [r.to_dict() for r in w.runs.list()],
        "sleep": [r.to_dict() for r in w.app.profile.runs(q["limit"])],
        "dream": [r.to_dict() for r in w.app.dream.runs(q["limit"])],
    }


@router.get("/runs/{run_id}", tags=["runs"])
def run(w: W, run_id: Id) -> Json:
    """One run started here: status, the step it is on, steps done of total, its report."""
    found = w.runs.get(run_id)
    if found is None:
        raise NotFound(
            f"no run #{run_id} was started by this server; list them with GET {API}/runs"
        )
    return found.to_dict()


def start_sleep_run(w: Web, dry_run: bool, timeout: float) -> Json:
    """The sleep with the configured LLM, in a thread (also the panel's button)."""
    sleep = w.app.sleep  # opened here (the app opens it once), run in the background
    return w.runs.start(
        "sleep",
        len(STEPS),
        lambda progress: sleep.run(dry_run=dry_run, timeout=timeout, progress=progress),
    ).to_dict()


def start_dream_run(
    w: Web, date: str | None, dry_run: bool, layers: list[str] | str | None = None
) -> Json:
    dream = w.app.dream
    chosen = [x.name for x in choose_layers(layers)] if layers else None  # bad names: 400 now
    return w.runs.start(
        "dream",
        len(LAYER_NAMES),
        lambda progress: dream.run(date, layers=chosen, dry_run=dry_run, progress=progress),
    ).to_dict()
