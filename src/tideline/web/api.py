"""The REST API under /api: every service the MCP tools expose, plus sleep and dream runs.

Each route is a `tideline.fields` command, the service call it maps onto (`tideline.serve.CALLS`,
the MCP tools' own) and what a person reads in the reference: `ROUTES` lists them in the
reference's order and `add` makes each one, taking the command's arguments from the query (GET)
or the JSON body (POST) through a model built from the spec, so bounds and defaults are the
CLI's and the MCP tools', and an argument added to a spec reaches the service with no edit here.
A sleep or a dream (`/sleep`, `/dream`) is a `background` route: its command's run
(`tideline.serve.RUN_CALLS`, the MCP tools' own) goes to a thread of this server's and the
route answers 202 with the entry to poll (`/runs/{id}`); the routes that read those entries are
the server's own calls (`server`). Nothing is assembled here: the services are `Tideline`'s.
Reads are GET; writes are POST and need the token when one is configured (the guard) and, from
a browser with the panel's cookies, the CSRF header.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header

from tideline.analysis import build_entity_graph
from tideline.app import Tideline
from tideline.errors import InvalidInput, NotFound
from tideline.fields import (
    ATTENTION_HEATMAP,
    DREAM_RUN,
    FACT_CLOSE,
    FACT_REJECT,
    FACT_TIMELINE,
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
    MEMORY_STATS,
    MEMORY_TRACE,
    MEMORY_WRITE,
    PREFETCH,
    RUNS,
    SCAN_UNINDEXED,
    SESSIONS,
    SLEEP_RUN,
    SYNC_TURN,
    Command,
)
from tideline.profile import Fact
from tideline.serve import CALLS, RUN_CALLS, SEARCHES, Call, searched
from tideline.web import _csrf
from tideline.web._models import Args, RecordId, body, query
from tideline.web._routes import API
from tideline.web._state import Web, web

router = APIRouter(prefix=API, dependencies=[Depends(_csrf.check_api)])
W = Annotated[Web, Depends(web)]
Json = dict[str, Any]
Id = RecordId
IdempotencyHeader = Annotated[str | None, Header(alias="Idempotency-Key")]
_PATH_PARAM = re.compile(r"{(\w+)(:path)?}")


@dataclass(frozen=True)
class Route:
    """A route made from a command: its arguments are the spec's fields (one named in the path
    is taken from there: a record id, or text for `{name:path}`), its body the command's call
    (`CALLS[command.tool]` unless `call` says otherwise; a `background` route's is its run,
    `start_in_background`). `name` is the endpoint's (the OpenAPI operation's), `doc` what the
    reference shows."""

    name: str
    method: str  # GET: the arguments from the query string; POST: from the JSON body
    path: str
    command: Command | None  # None: no arguments but the path's
    tag: str
    doc: str
    call: Call | None = None
    status: int = 200
    keyed: bool = False  # a write that takes an idempotency key, also as a header
    background: bool = False  # the command's run, started in a thread: the answer is its entry
    server: bool = False  # the call takes this server (`Web`: its runs), not the app

    def path_params(self) -> list[inspect.Parameter]:
        """The path's parameters: record ids, or text for `{name:path}`."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        return [
            inspect.Parameter(name, kind, annotation=str if whole else Id)
            for name, whole in _PATH_PARAM.findall(self.path)
        ]


def keyed(args: Json, header: str | None) -> Json:
    """The body's arguments with the write's idempotency key: the body's `idempotency_key` or
    the `Idempotency-Key` header (both: they must agree)."""
    given = args.get("idempotency_key")
    if header is not None and given is not None and header != given:
        raise InvalidInput(
            "the Idempotency-Key header and the body's idempotency_key differ; send one key"
        )
    return {**args, "idempotency_key": given if given is not None else header}


def add(route: Route) -> None:
    """Add `route` to the router: an endpoint whose signature is the app, the path's
    parameters, the command's other arguments and, for a keyed write, the `Idempotency-Key`
    header (FastAPI validates and documents them), calling the route's call with all of them."""
    cmd = route.command
    tool = cmd.tool if cmd else None
    on_server = route.server or route.background
    call = route.call or (_background(str(tool)) if route.background else CALLS[str(tool)])
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    in_path = route.path_params()
    params = [inspect.Parameter("w", kind, annotation=W), *in_path]
    skip = [p.name for p in in_path]
    if cmd is not None and any(f.name not in skip for f in cmd.fields):
        reader = query if route.method == "GET" else body
        given = Annotated[Args, Depends(reader(cmd, *skip))]
        params.append(inspect.Parameter("given", kind, annotation=given))
    if route.keyed:
        params.append(inspect.Parameter("key", kind, default=None, annotation=IdempotencyHeader))

    def endpoint(w: Web, given: Args | None = None, key: str | None = None, **path: Any) -> Json:
        args = given or {}
        answer = call(
            w if on_server else w.app, **path, **(keyed(args, key) if route.keyed else args)
        )
        if tool in SEARCHES:  # what the floor left out, in this API's words
            searched(answer, "pass min_score=0")
        return answer

    endpoint.__name__ = route.name
    endpoint.__doc__ = route.doc
    endpoint.__dict__["__signature__"] = inspect.Signature(params, return_annotation=Json)
    router.add_api_route(
        route.path,
        endpoint,
        methods=[route.method],
        tags=[route.tag],
        status_code=route.status,
    )


def _session_turns(app: Tideline, *, session: str) -> Json:
    turns = app.memory.session_turns(session)
    if not turns:
        raise NotFound(f"session {session!r} has no turns; list sessions with GET {API}/sessions")
    return {"session": session, "turns": [t.to_dict() for t in turns]}


# The graphs the panel draws, read from the core: the entity-role graph of the narratives (as
# the script layer computes it, without storing it) and the knowledge-graph edges between facts.
def graph(app: Tideline) -> dict[str, Any]:
    """`entities` and `edges` (co-occurrence, with role pairs), `fact_edges` with both facts'
    labels, and `malformed` entities_role parts; each read takes its service's lock."""
    rows = [(n.id, n.entities_role) for n in app.memory.all_narratives() if n.entities_role.strip()]
    out = build_entity_graph(rows).to_dict()
    facts = {f.id: f for f in app.profile.facts(status=None)}
    out["fact_edges"] = [
        {
            **e.to_dict(),
            "from_label": _label(facts.get(e.from_fact)),
            "to_label": _label(facts.get(e.to_fact)),
        }
        for e in app.profile.edges(live=True)
    ]
    return out


def _label(fact: Fact | None) -> str:
    return f"{fact.subject}/{fact.category}: {fact.value}" if fact is not None else "?"


def start_in_background(w: Web, tool: str, **arguments: Any) -> Json:
    """Start the command `tool`'s run (`RUN_CALLS`: a sleep, a dream) with the configured LLM in
    a thread of this server's (also the panel's buttons): its entry, polled by id. The pipeline
    is opened here (the app opens it once) and what the run would refuse is refused now."""
    run = RUN_CALLS[tool]
    work = run.start(w.app, None, **arguments)
    run.check(**arguments)
    return w.runs.start(run.kind, run.steps(), work).to_dict()


def _background(tool: str) -> Call:
    return lambda w, **arguments: start_in_background(w, tool, **arguments)


def _runs(w: Web, *, limit: int) -> Json:
    return {
        "started": [r.to_dict() for r in w.runs.list()],
        "sleep": [r.to_dict() for r in w.app.profile.runs(limit)],
        "dream": [r.to_dict() for r in w.app.dream.runs(limit)],
    }


def _run(w: Web, *, run_id: int) -> Json:
    found = w.runs.get(run_id)
    if found is None:
        raise NotFound(
            f"no run #{run_id} was started by this server; list them with GET {API}/runs"
        )
    return found.to_dict()


#: Every route that is a command's call, in the reference's order.
ROUTES = (
    # -- memory
    Route(
        "search",
        "GET",
        "/search",
        MEMORY_SEARCH,
        "memory",
        """Memories and raw turns (not with include_turns=false) best first, with the parts of
        each score.""",
    ),
    Route(
        "trace",
        "GET",
        "/narratives/{narrative_id}/trace",
        MEMORY_TRACE,
        "memory",
        "A narrative's source turns, each with its neighbours: where the memory came from.",
    ),
    Route(
        "write",
        "POST",
        "/narratives",
        MEMORY_WRITE,
        "memory",
        "Write a narrative memory (`memory_write`); retry with the same idempotency key.",
        status=201,
        keyed=True,
    ),
    Route(
        "sync_turn",
        "POST",
        "/turns",
        SYNC_TURN,
        "memory",
        "Keep one conversation turn, word for word (idempotent: `created` says if it was new).",
        keyed=True,
    ),
    Route(
        "stats",
        "GET",
        "/stats",
        MEMORY_STATS,
        "memory",
        "How much is remembered: sessions, turns, narratives by kind, vectors, the embedder.",
    ),
    Route(
        "sessions",
        "GET",
        "/sessions",
        SESSIONS,
        "memory",
        "The sessions, most recent first, with their turn counts.",
        call=lambda app, *, limit: {"sessions": app.memory.sessions(limit)},
    ),
    Route(
        "session_turns",
        "GET",
        "/sessions/{session:path}/turns",
        None,
        "memory",
        """A session's turns, oldest first. The key may hold `/`, sent as is or as %2F
        (`/api/sessions/openai/chat/turns`, `/api/sessions/openai%2Fchat/turns`).""",
        call=_session_turns,
    ),
    Route(
        "forget",
        "POST",
        "/forget",
        MEMORY_FORGET,
        "memory",
        "Show what would be forgotten; with confirm=true, erase it (tombstones stay).",
    ),
    # -- script layer
    Route(
        "attention",
        "GET",
        "/heatmap",
        ATTENTION_HEATMAP,
        "analysis",
        "Retrieval hits per memory cluster in a window, and the deserts (never retrieved).",
    ),
    Route(
        "entity_graph",
        "GET",
        "/graph",
        None,
        "analysis",
        "The entity-role graph of the narratives and the profile's fact edges.",
        call=graph,
    ),
    Route(
        "scan",
        "GET",
        "/scan",
        SCAN_UNINDEXED,
        "analysis",
        "Turns no memory links to yet, in chunks of one sitting (`memory_scan_unindexed`).",
    ),
    # -- injection
    Route(
        "context",
        "POST",
        "/context",
        MEMORY_CONTEXT,
        "inject",
        "The identity block, and with a message the turn's block (`memory_context`).",
    ),
    Route(
        "prefetch",
        "GET",
        "/prefetch",
        PREFETCH,
        "inject",
        "The memory block injected for one message (T1, T4); logs the hits' attention.",
        call=lambda app, *, message, session: app.provider.prefetch_block(
            message, session
        ).to_dict(),
    ),
    # -- profile
    Route(
        "profile",
        "GET",
        "/profile",
        MEMORY_PROFILE,
        "profile",
        """Facts with their evidence turns, filtered by status, category and subject; with `as_of`
        (an ISO date or time), the profile as it stood then in the user's time: the facts believed
        then with their status then, and the events, people and open questions of then.""",
    ),
    Route(
        "fact_timeline",
        "GET",
        "/facts/{fact_id}",
        FACT_TIMELINE,
        "profile",
        "A fact, its supersedes chain and every status change.",
    ),
    Route(
        "fact_reject",
        "POST",
        "/facts/{fact_id}/reject",
        FACT_REJECT,
        "profile",
        "Mark a fact wrong, with why; it stays, greyed, with the reason on its timeline.",
    ),
    Route(
        "fact_close",
        "POST",
        "/facts/{fact_id}/close",
        FACT_CLOSE,
        "profile",
        "Mark a fact no longer true; it stays, with an end time.",
    ),
    # -- library
    Route(
        "library_search",
        "GET",
        "/library/search",
        MEMO_SEARCH,
        "library",
        "Chunks best first by relevance, each with `location` (path:line) and `explain`.",
    ),
    Route(
        "library_status",
        "GET",
        "/library/status",
        MEMO_STATUS,
        "library",
        "Collections, what the index lags behind, and the folders skipped and why.",
    ),
    Route(
        "library_route",
        "GET",
        "/library/route",
        MEMO_ROUTE,
        "library",
        "Which collections a question belongs to, best first (`memo_route`).",
    ),
    Route(
        "library_read",
        "GET",
        "/library/read",
        MEMO_READ,
        "library",
        "Lines of a note, or the lines of a search hit's `path:line` (`memo_read`).",
    ),
    Route(
        "library_reindex",
        "POST",
        "/library/reindex",
        MEMO_REINDEX,
        "library",
        "Bring the index up to date with the files, or rebuild it (`memo_reindex`).",
    ),
    Route(
        "library_write",
        "POST",
        "/library/notes",
        MEMO_WRITE,
        "library",
        """Create a note in a collection, or append to one, and index it (`memo_write`); retry
        with the same idempotency key.""",
        status=201,
        keyed=True,
    ),
    # -- runs
    Route(
        "start_sleep",
        "POST",
        "/sleep",
        SLEEP_RUN,
        "runs",
        "Start a sleep in the background; poll GET /api/runs/{id} for its progress.",
        status=202,
        background=True,
    ),
    Route(
        "start_dream",
        "POST",
        "/dream",
        DREAM_RUN,
        "runs",
        """Start a dream (default: today; `layers`: only these) in the background; poll
        GET /api/runs/{id}.""",
        status=202,
        background=True,
    ),
    Route(
        "runs",
        "GET",
        "/runs",
        RUNS,
        "runs",
        "The runs this server started (with progress), and the recorded sleep and dream runs.",
        call=_runs,
        server=True,
    ),
    Route(
        "run",
        "GET",
        "/runs/{run_id}",
        None,
        "runs",
        "One run started here: status, the step it is on, steps done of total, its report.",
        call=_run,
        server=True,
    ),
)
for _route in ROUTES:
    add(_route)
