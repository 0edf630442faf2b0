"""What each tool calls: the service method a `tideline.fields` command's checked arguments map
onto, written once for every driver that speaks tools (the MCP server builds its tools from the
spec and this; Hermes's tools call the same). An argument added to a spec reaches the service
through `**arguments` without touching a driver.

A call takes the app and the arguments by name (every field of the command, validated: the
spec's defaults filled in) and returns the answer's JSON object (`to_dict`). Lists that models
send as one string ('a, b') become lists here (`names`). A search's empty answer says how its
caller sees what the relevance floor left out, which depends on the caller (`SEARCHES`): a tool
calls `run_tool`, the REST API says it in its own words.

A run of a pipeline (`sleep_run`, `dream_run`: minutes, with an LLM) is a `RunCall` of
`RUN_CALLS`: it opens the pipeline with the LLM it is given (the configured one, or the MCP
client's) and hands back the run itself, which the caller runs where it likes: the MCP tool in
its call (`mcp._rounds.add_run`), the REST API in a thread of its own, polled by id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, is_dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol

from tideline.app import Tideline
from tideline.fields import fact_statuses
from tideline.serve._tool_errors import searched

if TYPE_CHECKING:
    from tideline.consolidate import StepEvent
    from tideline.llm import LLM

Call = Callable[..., dict[str, Any]]


def to_dict(result: Any) -> dict[str, Any]:
    """A tool's JSON object: a dict, a `to_dict()`, a dataclass, else `{"result": value}`."""
    if isinstance(result, dict):
        return result
    if hasattr(result, "to_dict"):
        return dict(result.to_dict())
    if is_dataclass(result) and not isinstance(result, type):
        return asdict(result)
    return {"result": result}


def names(value: list[str] | str | None) -> list[str] | None:
    """Models send lists, JSON strings (pre-parsed by the SDK) or 'a, b'; the core gets a list."""
    if value is None or isinstance(value, list):
        return value
    return [part.strip() for part in value.split(",") if part.strip()]


def _search(app: Tideline, *, tags: list[str] | str | None, **rest: Any) -> dict[str, Any]:
    return to_dict(app.memory.search(tags=names(tags), **rest))


def _write(
    app: Tideline,
    *,
    tags: list[str] | str | None,
    related_entities: list[str] | str | None,
    **rest: Any,
) -> dict[str, Any]:
    written = app.memory.write(tags=names(tags), related_entities=names(related_entities), **rest)
    return to_dict(written)


def _forget(
    app: Tideline, *, turns: list[int] | None, narratives: list[int] | None, **rest: Any
) -> dict[str, Any]:
    found = app.memory.forget(turns=turns or (), narratives=narratives or (), **rest)
    return {**found.to_dict(), "done": found.done, "empty": found.empty}


def _profile(
    app: Tideline, *, status: str, as_of: str | None, category: str | None, subject: str | None
) -> dict[str, Any]:
    scope: dict[str, Any] = {
        "status": fact_statuses(status),
        "category": category,
        "subject": subject,
    }
    if as_of is not None:
        return to_dict(app.profile.as_of(as_of, **scope))
    return {"facts": [f.to_dict() for f in app.profile.facts(**scope)]}


def _memo_search(app: Tideline, *, query: str, path: str, **rest: Any) -> dict[str, Any]:
    return to_dict(app.library.search(query, path, **rest))


def _reindex(app: Tideline, *, path: str | None, full: bool) -> dict[str, Any]:
    return {"collections": [r.to_dict() for r in app.library.reindex(path, full=full)]}


def _threads(
    app: Tideline, *, action: str, memories: list[int] | None, **rest: Any
) -> dict[str, Any]:
    from tideline.consolidate.dream import thread_action

    return thread_action(app.dream, action, memories=memories or (), **rest)


def _heatmap(app: Tideline, *, since: str | None, until: str | None) -> dict[str, Any]:
    from tideline.analysis.attention import heatmap

    return heatmap(app.memory, since, until).to_dict()


def _scan(
    app: Tideline, *, max_gap_minutes: float, after: str | None, max_chars: int
) -> dict[str, Any]:
    from tideline.analysis.scanner import scan_unindexed

    found = scan_unindexed(app.memory, max_gap=timedelta(minutes=max_gap_minutes), after=after)
    return {**found.summary(), "markdown": found.to_markdown(max_chars=max_chars)}


def _context(
    app: Tideline, *, message: str | None, session: str | None, include_identity: bool
) -> dict[str, Any]:
    """The identity block, and with a message the turn's block too."""
    provider = app.provider
    found = []
    if not message or include_identity:
        found.append(provider.identity())
    if message:
        found.append(provider.prefetch_block(message, session))
    return {"text": "\n\n".join(b.text for b in found), "blocks": [b.to_dict() for b in found]}


#: tool name -> its call, `CALLS[name](app, **arguments)`.
CALLS: dict[str, Call] = {
    "sync_turn": lambda app, **a: to_dict(app.memory.sync_turn(**a)),
    "memory_write": _write,
    "memory_search": _search,
    "memory_trace": lambda app, **a: to_dict(app.memory.trace(**a)),
    "memory_stats": lambda app: app.memory.stats(),
    "memory_forget": _forget,
    "memory_attention_heatmap": _heatmap,
    "memory_scan_unindexed": _scan,
    "memory_context": _context,
    "memory_profile": _profile,
    "fact_reject": lambda app, *, fact_id, why: {
        "fact": app.profile.reject(fact_id, why).to_dict()
    },
    "fact_close": lambda app, *, fact_id, **a: {"fact": app.profile.close(fact_id, **a).to_dict()},
    "fact_timeline": lambda app, *, fact_id: to_dict(app.profile.timeline(fact_id)),
    "memory_threads": _threads,
    "memo_search": _memo_search,
    "memo_status": lambda app, *, path: to_dict(app.library.status(path)),
    "memo_reindex": _reindex,
    "memo_route": lambda app, *, query, **a: to_dict(app.library.route(query, **a)),
    "memo_write": lambda app, *, path, text, **a: to_dict(app.library.write(path, text, **a)),
    "memo_read": lambda app, **a: to_dict(app.library.read(**a)),
}

#: The tools whose empty answer may hide what the relevance floor left out (`searched`).
SEARCHES = frozenset({"memory_search", "memo_search"})


def run_tool(app: Tideline, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool's answer (`CALLS[tool]`): a search's empty answer tells the model to call the tool
    again with min_score=0 when the floor left results out."""
    answer = CALLS[tool](app, **arguments)
    if tool in SEARCHES:
        searched(answer, f"call {tool} again with min_score=0")
    return answer


# -- runs of a pipeline ---------------------------------------------------------------------
class Report(Protocol):
    """What a run hands back (`SleepReport`, `DreamReport`): its record as JSON, and as the lines
    the CLI prints."""

    def to_dict(self) -> dict[str, Any]: ...

    def lines(self) -> list[str]: ...


#: A run, ready to go: `work(progress)` runs it, calling `progress` at each step boundary.
Work = Callable[[Callable[["StepEvent"], None]], Report]
#: The LLM a run goes with when it is not the configured one: the MCP client's model, or none
#: and why (the LLM steps are then skipped, saying so).
Using = tuple["LLM | None", str]
Kind = Literal["sleep", "dream"]


def _no_check(**arguments: Any) -> None:
    """Nothing a run refuses before it starts."""


@dataclass(frozen=True)
class RunCall:
    """A command that runs a pipeline of steps (see the module docstring). `start(app, using,
    **arguments)` opens the pipeline — with the configured LLM when `using` is None — and returns
    its `Work`; `steps()` is how many steps its progress counts to (Sleep's steps, Dream's
    layers); `check(**arguments)` refuses now what the run would only refuse once started, for a
    caller that runs it in the background and must answer at once."""

    kind: Kind
    steps: Callable[[], int]
    start: Callable[..., Work]
    check: Callable[..., None] = _no_check


def _sleep_steps() -> int:
    from tideline.consolidate import STEPS

    return len(STEPS)


def _sleep(app: Tideline, using: Using | None, **arguments: Any) -> Work:
    sleep = app.sleep if using is None else app.sleep_using(*using)
    return lambda progress: sleep.run(progress=progress, **arguments)


def _dream_steps() -> int:
    from tideline.consolidate.dream import LAYER_NAMES

    return len(LAYER_NAMES)


def _dream(
    app: Tideline, using: Using | None, *, layers: list[str] | str | None, **rest: Any
) -> Work:
    dream = app.dream if using is None else app.dream_using(*using)
    chosen = names(layers) or None
    return lambda progress: dream.run(layers=chosen, progress=progress, **rest)


def _layers_known(*, layers: list[str] | str | None, **rest: Any) -> None:
    from tideline.consolidate.dream import choose_layers

    if layers:  # unknown names: an error now, not a failed run
        choose_layers(layers)


#: tool name -> its run, for the commands that run a pipeline.
RUN_CALLS: dict[str, RunCall] = {
    "sleep_run": RunCall("sleep", _sleep_steps, _sleep),
    "dream_run": RunCall("dream", _dream_steps, _dream, _layers_known),
}
