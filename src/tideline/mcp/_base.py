"""The one MCP server base: argument synonyms, the call wrapper, and errors in one format.

Every tool body is `server.call(tool, lambda: <core call>, lock=…)`. The wrapper takes the lock
the core call needs, turns the result into a dict and a `TidelineError` into one line a model can
act on: `<the core's message>; next: <what to call>`. Schema violations, unknown arguments,
unknown tools and crashes come back as one line too (a crash is logged with its traceback), so
one bad call never takes the server down.

Imports run one way: this module ← the `*_tools` modules (each `register(server)`) ← `server`.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from tideline.app import Tideline
from tideline.errors import NotFound, SleepBusy, TidelineError
from tideline.fields import Command
from tideline.library import PathOutsideLibrary
from tideline.memory import Memory
from tideline.pathnames import hide_paths
from tideline.serve import to_dict

log = logging.getLogger("tideline.mcp")

Lock = Literal["agent", "library"]
MEMO_TOOLS = (
    "memo_search",
    "memo_status",
    "memo_reindex",
    "memo_route",
    "memo_write",
    "memo_read",
)
FACT_TOOLS = ("fact_reject", "fact_close", "fact_timeline")

#: What to call next after a core error, by tool and error type (the first match wins).
NEXT_STEP: dict[tuple[str, type[TidelineError]], str] = {
    ("memory_write", NotFound): "call memory_search to find turn ids",
    ("memory_trace", NotFound): "call memory_search to find narrative ids",
    ("memory_forget", NotFound): "call memory_search to find the ids",
    **{
        (tool, PathOutsideLibrary): "pass a path relative to the library root, e.g. the 'path' "
        "of a collection from memo_status"
        for tool in MEMO_TOOLS
    },
    **{
        (tool, NotFound): "call memo_status to list the collections and what is not indexed"
        for tool in MEMO_TOOLS
    },
    **{
        (tool, NotFound): "call memory_profile with status='all' to find fact ids"
        for tool in FACT_TOOLS
    },
    ("sleep_run", SleepBusy): "wait for that sleep to finish; the memory tools work meanwhile",
    ("dream_run", SleepBusy): "wait for that run to finish; the memory tools work meanwhile",
}
_TOOL_NAME = re.compile(r"\b(?:memory|memo)_[a-z_]+")


class ToolServer(MCPServer[Any]):
    """`MCPServer` bound to one `Tideline`, with synonyms and one way to call the core.

    Two locks: "agent" for the agent database (the app's `db_lock`, shared with `Memory`, which
    takes it only around database work) and "library" for the markdown library. `remote`: the
    clients hold only a token (MCP over HTTP), so errors never show the server's paths.
    """

    def __init__(self, app: Tideline, *, remote: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.app = app
        self.remote = remote
        self.aliases: dict[str, dict[str, str]] = {}  # tool -> alias -> argument
        self.locks: dict[Lock, AbstractContextManager[object]] = {
            "agent": app.db_lock,
            "library": app.library_lock,
        }

    def add_tool(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """The SDK's `add_tool`, with a tool described by its docstring described without the
        docstring's source indentation (a tool defined in a function carries 8 spaces a line)."""
        if not kwargs.get("description") and fn.__doc__:
            kwargs["description"] = inspect.cleandoc(fn.__doc__)
        super().add_tool(fn, *args, **kwargs)

    def accept(self, *commands: Command) -> None:
        """Rename the synonyms models use for these tools' arguments (`limit` for `k`)."""
        for cmd in commands:
            if cmd.tool is not None:
                self.aliases[cmd.tool] = cmd.aliases

    @property
    def memory(self) -> Memory:
        """The app's memory, opened once under the agent lock (workers may race to open it)."""
        with self.locks["agent"]:
            return self.app.memory

    def call(
        self, tool: str, fn: Callable[[], Any], *, lock: Lock | None = "agent"
    ) -> dict[str, Any]:
        """Run one core call under `lock` (None: the service locks for itself, as `Memory`
        does, so a long embedding never holds up another client); errors become one line."""
        try:
            with self.locks[lock] if lock else nullcontext():
                return to_dict(fn())
        except TidelineError as exc:
            raise ToolError(error_message(tool, exc)) from exc

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
        if name not in schemas:
            raise ToolError(
                f"there is no tool {name!r}; the tools are: {', '.join(sorted(schemas))}"
            )
        arguments = self._normalise(name, dict(arguments or {}), schemas[name])
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            message = _message(name, exc)
            if self.remote:
                message = hide_paths(message, self.app.private_paths())
            raise ToolError(message) from None

    def _normalise(
        self, name: str, arguments: dict[str, Any], schema: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Rename synonyms (the real name wins when both are given); refuse unknown names."""
        known = set(schema.get("properties", {}))
        for alias, target in self.aliases.get(name, {}).items():
            if alias in arguments and alias not in known:
                value = arguments.pop(alias)
                arguments.setdefault(target, value)
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise ToolError(
                f"{name} has no argument {', '.join(map(repr, unknown))}; "
                f"its arguments are: {', '.join(sorted(known))}"
            )
        return arguments


def error_message(tool: str, exc: TidelineError) -> str:
    """One line: the core's message, then `; next: <hint>` unless it already names that tool."""
    message = _one_line(str(exc))
    hint = next(
        (h for (t, kind), h in NEXT_STEP.items() if t == tool and isinstance(exc, kind)), None
    )
    if hint is None:
        return message
    target = _TOOL_NAME.search(hint)
    if target and target.group() in message:
        return message
    return f"{message}; next: {hint}"


def _message(tool: str, exc: ToolError) -> str:
    """One line for the model: the tool's own message, the schema violation, or a crash note."""
    cause = exc.__cause__
    if isinstance(cause, ToolError) and not isinstance(cause, UnexpectedToolError):
        return _one_line(str(cause))
    if isinstance(cause, ValidationError):
        return describe_validation(tool, cause)
    if isinstance(exc, UnexpectedToolError):
        log.error("tool %s crashed", tool, exc_info=cause or exc)
        kind = type(cause).__name__ if cause else "error"
        return (
            f"{tool} failed with an unexpected {kind}; the server logged it and is still "
            "running; retry once, and if it fails again continue without this tool"
        )
    return _one_line(str(exc))


def describe_validation(tool: str, exc: ValidationError) -> str:
    """`memory_search: argument 'k': … (got 'ten'); fix the arguments to match the … schema`."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"missing required argument {where!r}")
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            msg = err["msg"][:1].lower() + err["msg"][1:]
            parts.append(f"argument {where!r}: {msg} (got {got})")
    return _one_line(f"{tool}: {'; '.join(parts)}; fix the arguments to match the {tool} schema")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def searched(tool: str, answer: dict[str, Any]) -> dict[str, Any]:
    """A search tool's answer: an empty list keeps its `reason`, and when the relevance floor
    left results out the reason says how this tool shows them."""
    if not answer.get("hits") and answer.get("left_out"):
        answer["reason"] = f"{answer['reason']}; call {tool} again with min_score=0 to see them"
    return answer
