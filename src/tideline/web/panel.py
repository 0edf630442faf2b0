"""The panel: server-rendered pages over the same services as the API.

Pages read with GET; the few forms that change something (mark a fact wrong, close it, start a
run, log in) POST with the CSRF field and answer with a redirect back to the page, so the change
is visible at once and a reload does not repeat it. Facts are never deleted or edited here: the
seed's rule, and the core has no such call. Every value goes through Jinja's autoescape.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from pathlib import Path
from typing import Annotated, Any, Literal, cast
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markdown_it import MarkdownIt

from tideline import __version__
from tideline.analysis import topic_bounds
from tideline.analysis.attention import heatmap
from tideline.analysis.scripts import last_built, topic_map
from tideline.clock import to_text
from tideline.errors import InvalidInput, NotFound
from tideline.fields import LIVE, MEMO_SEARCH, MEMORY_PROFILE, MEMORY_SEARCH, fact_statuses
from tideline.memory import Narrative
from tideline.search import SearchResult, interleave
from tideline.serve import client_of
from tideline.web import _csrf
from tideline.web._models import RecordId
from tideline.web._pictures import Moment, bubbles, graph_layout, heat_bars, weight_dots
from tideline.web._routes import CSRF_FIELD, FAVICON, LOGIN, LOGOUT, SESSION_COOKIE
from tideline.web._state import Web, web
from tideline.web.api import graph, start_in_background

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")


def session_url(key: str, turn: int | None = None) -> str:
    """A session's page. The key goes into the path whole (`/` as %2F: imported keys hold it,
    `openai/chat`); a key that is a dot segment (`.`, `..`), which a browser would resolve away,
    goes into the query instead. With `turn`, that turn is marked and scrolled to."""
    if key in (".", ".."):
        url = f"/sessions?key={quote(key, safe='')}"
        return url + (f"&turn={turn}#turn-{turn}" if turn is not None else "")
    url = f"/sessions/{quote(key, safe='')}"
    return url + (f"?turn={turn}#turn-{turn}" if turn is not None else "")


def when(value: float | str | None) -> str:
    """A time as a person reads it, `2026-12-01 10:04 UTC`, from seconds since 1970 (the
    library's state) or the stored form; nothing for none."""
    if value is None or value == "":
        return ""
    if isinstance(value, int | float):
        value = to_text(dt.datetime.fromtimestamp(value, dt.UTC))
    return f"{value[:10]} {value[11:16]} UTC" if len(value) >= 16 else value


TEMPLATES.env.globals["session_url"] = session_url
TEMPLATES.env.filters["when"] = when
router = APIRouter(include_in_schema=False)
W = Annotated[Web, Depends(web)]
Csrf = Annotated[str, Form(alias=CSRF_FIELD)]
_MARKDOWN = MarkdownIt("commonmark", {"html": False})  # raw HTML in a note is shown as text
PROFILE_STATUSES = MEMORY_PROFILE.field("status").choices


def page(request: Request, template: str, code: int = 200, /, **context: object) -> HTMLResponse:
    """Render `template` with the CSRF token and the agent's name; set the CSRF cookie."""
    state: Web = request.app.state.web
    response = TEMPLATES.TemplateResponse(
        request,
        template,
        {
            "csrf": _csrf.token_for(request),
            "csrf_field": CSRF_FIELD,
            "agent": state.app.settings.agent_name,
            "version": __version__,
            "token_on": state.tokens_on,
            "logged_in": SESSION_COOKIE in request.cookies,
            **context,
        },
        status_code=code,
    )
    _csrf.keep(request, response)
    return response


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    return page(request, "error.html", status, status_code=status, message=message)


def back(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


# -- search and trace ------------------------------------------------------------------------
#: The relevance floor as the search forms send it: empty for the default (`auto`).
Floor = Annotated[str, Query(max_length=20)]


def _floor(value: str) -> float | None:
    """The form's floor: None when empty (the setting), else a number the search checks."""
    if not value.strip():
        return None
    try:
        return float(value)
    except ValueError:
        raise InvalidInput(
            f"floor {value!r}: give a relevance from 0 to 1, or leave it empty"
        ) from None


def _more(url: str, **params: str) -> str:
    """The same search with the relevance floor off (the notice's "show them" link)."""
    query = "&".join(f"{k}={quote(v)}" for k, v in params.items())
    return f"{url}?{query}&min_score=0"


def _floors(memory: SearchResult | None, library: SearchResult | None) -> str:
    """The relevance floor the search page names once: one number, or each kind's when the
    memory's and the notes' calibrated floors differ."""
    named = [(n, f.floor) for n, f in (("memories and turns", memory), ("notes", library)) if f]
    if len({round(x, 3) for _, x in named}) <= 1:
        return f"{named[0][1]:.2f}" if named else ""
    return ", ".join(f"{x:.3f} for {n}" for n, x in named)


@router.get("/", response_class=HTMLResponse)
def search_page(
    request: Request,
    w: W,
    q: Annotated[str, Query(max_length=2000)] = "",
    mode: Annotated[str, Query(pattern="^(hybrid|lex|vec)$")] = "hybrid",
    min_score: Floor = "",
) -> Response:
    """The search box over memories, turns and the library: one list, best first by
    relevance, each hit with how its score was made — `tideline search` and `memo search` with
    their defaults (the same hits, order and scores as the CLI and MCP), one notice of what the
    floor left out with a control to show it, and, with the floor off, one to hide it again."""
    found: dict[str, Any] = {"memory": None, "library": None, "library_note": ""}
    floor = _floor(min_score)
    k = cast(int, MEMORY_SEARCH.field("k").default)
    notes_k = cast(int, MEMO_SEARCH.field("k").default)
    if q.strip():
        found["memory"] = w.app.memory.search(q, k=k, mode=mode, min_score=floor)
        if w.app.settings.memo_root:
            try:
                found["library"] = w.app.library.search(
                    q, "*", k=notes_k, mode=mode, min_score=floor
                )
            except InvalidInput as exc:
                found["library_note"] = str(exc)
        else:
            found["library_note"] = "no library here (MEMO_ROOT, or the tokens file's library)"
    results = [f for f in (found["memory"], found["library"]) if f is not None]
    hits = interleave(*(f.hits for f in results))
    left_out = sum(f.left_out for f in results)
    warnings = list(dict.fromkeys(x for f in results for x in f.warnings))
    stats = w.app.memory.stats()
    return page(
        request,
        "search.html",
        q=q,
        mode=mode,
        min_score=min_score,
        stats=stats,
        hits=hits,
        warnings=warnings,
        more_url=_more("/", q=q, mode=mode),
        less_url=f"/?q={quote(q)}&mode={mode}",
        left_out=left_out,
        flat=any(f.flat for f in results),
        floors=_floors(found["memory"], found["library"]),
        floor_off=floor == 0,
        **found,
    )


@router.get("/trace/{narrative_id}", response_class=HTMLResponse)
def trace_page(request: Request, w: W, narrative_id: RecordId, window: int = 3) -> Response:
    """A narrative and its source turns, each in its conversation."""
    found = w.app.memory.trace(narrative_id, min(max(window, 0), 10))
    return page(request, "trace.html", trace=found)


# -- sessions --------------------------------------------------------------------------------
@router.get("/sessions", response_class=HTMLResponse)
def sessions_page(
    request: Request, w: W, day: str | None = None, key: str | None = None, turn: int | None = None
) -> Response:
    """Sessions grouped by the day they started; one day's sessions when `day` is given; one
    session's turns when `key` is (the form of `session_url` for a key the path cannot hold)."""
    if key is not None:
        return session_page(request, w, key, turn)
    every = w.app.memory.sessions(1000)
    days: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in every:
        days[(s["started_at"] or "")[:10] or "undated"].append(s)
    chosen = day if day in days else next(iter(days), None)
    return page(
        request, "sessions.html", days=days, day=chosen, sessions=days.get(chosen or "", [])
    )


@router.get("/sessions/{session:path}", response_class=HTMLResponse)
def session_page(request: Request, w: W, session: str, turn: int | None = None) -> Response:
    """A session's turns in order; its key may hold `/` (`/sessions/openai/chat`)."""
    if not session:
        return back("/sessions")
    turns = w.app.memory.session_turns(session)
    if not turns:
        raise NotFound(f"session {session!r} has no turns; pick one on /sessions")
    return page(request, "session.html", session=session, turns=turns, mark=turn)


@router.get("/turns/{turn_id}")
def turn_page(w: W, turn_id: RecordId) -> Response:
    """A turn (e.g. a fact's evidence) shown in its conversation."""
    found = w.app.memory.turns([turn_id])
    if not found:
        raise NotFound(f"there is no turn #{turn_id}; search with include_turns to find turn ids")
    turn = found[0]
    return back(session_url(turn.session, turn.id))


# -- profile ---------------------------------------------------------------------------------
@router.get("/profile", response_class=HTMLResponse)
def profile_page(
    request: Request,
    w: W,
    status: str = "all",
    subject: str | None = None,
    category: str | None = None,
    as_of: str | None = None,
) -> Response:
    """Facts by subject and category, every status shown (closed and rejected greyed); with
    `as_of` (a date), the profile as it stood that day in the user's time, and its events."""
    if status not in PROFILE_STATUSES:
        raise InvalidInput(f"status={status!r}: use one of {', '.join(PROFILE_STATUSES)}")
    statuses, subject, category = fact_statuses(status), subject or None, category or None
    view = None
    if as_of:
        day = as_of
        view = w.app.profile.as_of(day, status=statuses, subject=subject, category=category)
        facts = view.facts
    else:
        facts = w.app.profile.facts(status=statuses, subject=subject, category=category)
    grouped: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for f in facts:
        grouped[f.subject][f.category].append(f)
    return page(
        request,
        "profile.html",
        grouped=grouped,
        count=len(facts),
        status=status,
        statuses=PROFILE_STATUSES,
        subject=subject or "",
        category=category or "",
        live=LIVE,
        as_of=as_of or "",
        view=view,
    )


@router.get("/facts/{fact_id}", response_class=HTMLResponse)
def fact_page(request: Request, w: W, fact_id: RecordId) -> Response:
    """A fact's timeline: evidence, supersedes chain, every status change."""
    return page(request, "fact.html", timeline=w.app.profile.timeline(fact_id))


@router.post("/facts/{fact_id}/reject")
def reject(
    request: Request,
    w: W,
    fact_id: RecordId,
    csrf: Csrf,
    why: Annotated[str, Form(min_length=1, max_length=2000)],
    then: Annotated[str, Form()] = "/profile",
) -> Response:
    """Mark wrong (asks why): the fact stays, greyed, with the reason on its timeline."""
    _csrf.check(request, csrf)
    w.app.profile.reject(fact_id, why)
    return back(_local(then) + f"#fact-{fact_id}")


@router.post("/facts/{fact_id}/close")
def close(
    request: Request,
    w: W,
    fact_id: RecordId,
    csrf: Csrf,
    why: Annotated[str, Form(max_length=2000)] = "",
    then: Annotated[str, Form()] = "/profile",
) -> Response:
    """No longer true: the fact stays with an end time."""
    _csrf.check(request, csrf)
    w.app.profile.close(fact_id, why=why.strip() or None)
    return back(_local(then) + f"#fact-{fact_id}")


def _local(url: str) -> str:
    """Only a path on this server is a place to go back to (no open redirect)."""
    return url if url.startswith("/") and not url.startswith("//") and "\\" not in url else "/"


# -- pictures --------------------------------------------------------------------------------
@router.get("/pictures", response_class=HTMLResponse)
def pictures_page(
    request: Request, w: W, since: str | None = None, until: str | None = None
) -> Response:
    """The attention heatmap (deserts marked), the topic map, the entity graph and the weights
    over the user's time, drawn; a picture that cannot be drawn yet says why in one sentence."""
    heat = heatmap(w.app.memory, since or None, until or None).to_dict()
    stats = w.app.memory.stats()
    topics, n_topics = topic_map(w.app.memory, 40)
    built = last_built(w.app.memory, "topics")
    g = graph(w.app)
    narratives = w.app.memory.all_narratives(links=True)
    return page(
        request,
        "pictures.html",
        heat=heat,
        bars=heat_bars(heat),
        heat_note=heat_note(heat, stats),
        topics=bubbles(topics),
        n_topics=n_topics,
        topics_note="" if topics else topics_note(len(narratives), built),
        graph=graph_layout(g),
        fact_edges=g["fact_edges"],
        weights=weight_dots(moments(w, narratives)),
        since=since or "",
        until=until or "",
    )


def moments(w: Web, narratives: list[Narrative]) -> list[Moment]:
    """Each narrative at when it was said (its source turns' latest time), else when written."""
    linked = sorted({t for n in narratives for t in n.source_links})
    said: dict[int, str] = {}
    for start in range(0, len(linked), 500):
        part = linked[start : start + 500]
        said.update((t.id, t.ts) for t in w.app.memory.turns(part))
    out = []
    for n in narratives:
        times = [said[t] for t in n.source_links if t in said]
        at = max(times) if times else n.created_at
        out.append(Moment(n.id, at, bool(times), n.weight, n.gesture))
    return out


def heat_note(heat: dict[str, Any], stats: dict[str, Any]) -> str:
    """What the heatmap says when it has no clusters to draw, or no hits, in one sentence."""
    if heat["clusters"] or heat["deserts"]:
        return "" if heat["total_hits"] else "No retrieval hit in this window: every cluster is a desert."  # fmt: skip
    memories = stats["narratives"]
    if not memories:
        return "The heatmap shows which clusters of memories retrieval reaches; there are no memories yet."  # fmt: skip
    if stats["embedder"] == "none":
        return (
            f"The heatmap needs clusters of memories by meaning, and this memory has no "
            f"embedder to give its {memories} memories vectors (TIDELINE_EMBEDDER=none)."
        )
    if not stats["narrative_vectors"]:
        return (
            f"No clusters yet: `tideline embed` gives the {memories} memories vectors, then "
            "`tideline scripts clusters` groups them by meaning."
        )
    return (
        f"No clusters yet: `tideline scripts clusters` (or `scripts all`, as a daily cron "
        f"would) groups the {memories} memories by meaning."
    )


def topics_note(narratives: int, built: dict[str, Any] | None) -> str:
    """Why there is no topic map, in one sentence."""
    fewest, most = topic_bounds(narratives)
    if fewest > most:
        return (
            f"A topic map needs 3 memories or more: a topic is a word several memories share "
            f"but not all of them (there {'is' if narratives == 1 else 'are'} {narratives})."
        )
    if built is None:
        return (
            f"No topics yet: `tideline scripts topics` (or `scripts all`, as a daily cron "
            f"would) builds them from the {narratives} memories."
        )
    if built["summary"].get("narratives") != narratives:
        return (
            f"No topics: they were last built from {built['summary'].get('narratives', 0)} "
            f"memories ({built['finished_at'][:16].replace('T', ' ')} UTC); "
            "`tideline scripts topics` builds them again from the "
            f"{narratives} there are now."
        )
    share = f"exactly {fewest}" if fewest == most else f"{fewest} to {most}"
    return (
        f"No topics: no word is in {share} of the {narratives} memories, which is what a "
        "topic is at this size; they appear as memories come back to a theme."
    )


# -- library ---------------------------------------------------------------------------------
@router.get("/library", response_class=HTMLResponse)
def library_page(
    request: Request,
    w: W,
    q: str = "",
    path: str = "*",
    mode: str = "hybrid",
    min_score: Floor = "",
) -> Response:
    """Collections and their status (what lags, what was skipped and why), and a search."""
    more = _more("/library", q=q, path=path, mode=mode)
    shown = {"q": q, "path": path, "mode": mode, "min_score": min_score, "more_url": more}
    if not w.app.settings.memo_root:
        return page(request, "library.html", status=None, hits=None, **shown)
    status = w.app.library.status(None)
    root = _shown_root(status, w.tokens_on)
    hits = None
    if q.strip():
        hits = w.app.library.search(q, path or "*", k=10, mode=mode, min_score=_floor(min_score))
    return page(request, "library.html", status=status, root=root, hits=hits, **shown)


def _shown_root(status: dict[str, Any], tokens_on: bool) -> str:
    """The library's heading: its folder for the owner at the keyboard (no token), its
    collections for a token holder, who must not learn where the server keeps its files."""
    if not tokens_on:
        return str(status["root"])
    names = [str(c["name"]) for c in status["collections"]]
    return f"the library: {', '.join(names)}" if names else "the library"


@router.get("/library/note", response_class=HTMLResponse)
def note_page(
    request: Request, w: W, path: str, line: int = 0, lines: int = 0, q: str = ""
) -> Response:
    """A note rendered from its markdown, the lines of the hit (`line`, `lines`) highlighted."""
    note = w.app.library.read(path, 1, None)
    text_lines = note.text.splitlines()
    if line >= 1:
        first, last = line - 1, line - 1 + max(1, lines)
        parts = [text_lines[:first], text_lines[first:last], text_lines[last:]]
    else:
        parts = [text_lines, [], []]
    before, hit, after = (_MARKDOWN.render("\n".join(p)) if p else "" for p in parts)
    return page(
        request, "note.html", note=note, before=before, hit=hit, after=after, line=line, q=q
    )


# -- runs ------------------------------------------------------------------------------------
@router.get("/runs", response_class=HTMLResponse)
def runs_page(request: Request, w: W) -> Response:
    """Start a sleep or a dream; the runs started here and the recorded ones with tokens."""
    return page(
        request,
        "runs.html",
        started=w.runs.list(),
        sleeps=w.app.profile.runs(30),
        dreams=w.app.dream.runs(30),
        llm=w.app.settings.llm_base_url or "",
    )


@router.post("/runs/{kind}")
def start_run(
    request: Request,
    w: W,
    kind: Literal["sleep", "dream"],
    csrf: Csrf,
    dry_run: Annotated[bool, Form()] = False,
) -> Response:
    """Start a sleep or a dream (today) and go to its progress page."""
    _csrf.check(request, csrf)
    if kind == "sleep":
        run = start_in_background(w, "sleep_run", dry_run=dry_run, timeout=0.0)
    else:
        run = start_in_background(w, "dream_run", date=None, dry_run=dry_run, layers=None)
    return back(f"/runs/{run['id']}")


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, w: W, run_id: RecordId) -> Response:
    """One run's progress; the page polls /api/runs/{id} until it is over."""
    found = w.runs.get(run_id)
    if found is None:
        raise NotFound(f"no run #{run_id} was started by this server; see /runs")
    return page(request, "run.html", run=found)


@router.get(FAVICON)
def favicon() -> Response:
    """The icon, for what a browser asks of any page (a JSON answer too)."""
    return FileResponse(Path(__file__).parent / "static" / "icon.svg", media_type="image/svg+xml")


# -- login -----------------------------------------------------------------------------------
@router.get(LOGIN, response_class=HTMLResponse)
def login_page(request: Request) -> Response:
    return page(request, "login.html", failed=False)


@router.post(LOGIN)
def login(
    request: Request, w: W, csrf: Csrf, token: Annotated[str, Form(max_length=1000)]
) -> Response:
    """Check the token once; the browser then keeps a session cookie (signed with this server's
    secret, ending after `panel_session_hours`) that opens that token's namespace and no other."""
    _csrf.check(request, csrf)
    guard = w.guard
    if guard is None or not guard.tokens:
        return back("/")
    key = guard.tokens.find(token.strip())
    if key is None:
        wait = guard.throttle.wrong(client_of(request.scope))
        if wait is not None:
            refused = page(request, "login.html", 429, failed=True, wait=wait)
            refused.headers["retry-after"] = str(wait)
            return refused
        return page(request, "login.html", 401, failed=True)
    response = back("/")  # the cookie names the token's namespace, whichever app answered
    response.set_cookie(
        SESSION_COOKIE,
        w.sessions.issue(key),
        max_age=w.sessions.seconds,
        httponly=True,
        samesite="strict",
        path="/",
    )
    return response


@router.post(LOGOUT)
def logout(request: Request, csrf: Csrf) -> Response:
    """End this browser's session (the cookie goes; the token still works)."""
    _csrf.check(request, csrf)
    response = back(LOGIN)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response
