"""The one MCP server base: argument synonyms, the call wrapper, and errors in one format.

Every tool body is `server.call(tool, lambda: <core call>)`; each service takes the lock it
needs (the SDK runs sync tools in worker threads). The wrapper turns the result into a dict and a
`TidelineError` into one line a model can act on: `<the core's message>; next: <what to
call>`. Schema violations, unknown arguments, unknown tools and crashes come back as one line
too (a crash is logged with its traceback), so one bad call never takes the server down.

Imports run one way: this module ← the `*_tools` modules (each `register(server)`) ← `server`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ValidationError

from tideline.app import Tideline
from tideline.errors import TidelineError
from tideline.fields import Command
from tideline.pathnames import hide_paths
from tideline.serve import (
    annotated,
    describe_validation,
    error_message,
    one_line,
    run_tool,
    to_dict,
)

log = logging.getLogger("tideline.mcp")

#: The hints of a tool's annotations that a tool which only reads, and one which writes but
#: deletes nothing, share; each tool adds its title and `idempotent_hint` (whether a repeat
#: changes nothing more).
READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "open_world_hint": False}
WRITES = {"read_only_hint": False, "destructive_hint": False, "open_world_hint": False}


@dataclass(frozen=True)
class Tool:
    """A tool made from a `tideline.fields` command: its arguments are the spec's fields (names,
    types, bounds, defaults, descriptions, synonyms), its body the command's service call
    (`tideline.serve.CALLS`); only what the model reads is written here."""

    command: Command
    description: str  # for the model; "{agent}" becomes the agent's name
    annotations: ToolAnnotations
    titled: bool = True  # the tool's own title is its annotations' (the library's have none)


class ToolServer(MCPServer[Any]):
    """`MCPServer` bound to one `Tideline`, with synonyms and one way to call the core.

    `remote`: the clients hold only a token (MCP over HTTP), so errors never show the server's
    paths.
    """

    def __init__(self, app: Tideline, *, remote: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.app = app
        self.remote = remote
        self.aliases: dict[str, dict[str, str]] = {}  # tool -> alias -> argument

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

    def add_command(
        self, spec: Tool, body: Callable[..., dict[str, Any] | InputRequiredResult] | None = None
    ) -> None:
        """Add `spec`'s tool: a function whose signature is the command's fields, in the spec's
        order (the SDK builds the input schema from it), calling `run_tool(app, tool, args)`;
        or, given `body`, a tool that also takes the call's context, `body(ctx=…, **args)` (a
        run with an LLM: `_rounds.add_run`)."""
        cmd, name = spec.command, spec.command.tool
        assert name is not None, "only a command with a tool name is a tool"
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [
            inspect.Parameter(f.name, kind, annotation=annotated(cmd, f.name)) for f in cmd.fields
        ]
        returns: Any = dict[str, Any]
        if body is None:

            def tool(**arguments: Any) -> Any:
                return self.call(name, lambda: run_tool(self.app, name, arguments))

        else:
            tool = body
            params.append(inspect.Parameter("ctx", kind, annotation=Context))
            returns = dict[str, Any] | InputRequiredResult
            # the SDK finds the context parameter by the function's type hints
            tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
        tool.__name__ = name
        tool.__dict__["__signature__"] = inspect.Signature(params, return_annotation=returns)
        self.add_tool(
            tool,
            name=name,
            title=spec.annotations.title if spec.titled else None,
            description=inspect.cleandoc(spec.description).format(
                agent=self.app.settings.agent_name
            ),
            annotations=spec.annotations,
        )
        self.accept(cmd)

    def call(self, tool: str, fn: Callable[[], Any]) -> dict[str, Any]:
        """Run one core call; its result as a dict, a `TidelineError` as one line."""
        try:
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


def _message(tool: str, exc: ToolError) -> str:
    """One line for the model: the tool's own message, the schema violation, or a crash note."""
    cause = exc.__cause__
    if isinstance(cause, ToolError) and not isinstance(cause, UnexpectedToolError):
        return one_line(str(cause))
    if isinstance(cause, ValidationError):
        return describe_validation(tool, cause)
    if isinstance(exc, UnexpectedToolError):
        log.error("tool %s crashed", tool, exc_info=cause or exc)
        kind = type(cause).__name__ if cause else "error"
        return (
            f"{tool} failed with an unexpected {kind}; the server logged it and is still "
            "running; retry once, and if it fails again continue without this tool"
        )
    return one_line(str(exc))
