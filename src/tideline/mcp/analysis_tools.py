"""The script-layer tools: `memory_attention_heatmap` and `memory_scan_unindexed`.

Both are read only and map straight onto `tideline.analysis.attention.heatmap` and
`tideline.analysis.scanner.scan_unindexed`; the rebuilds themselves run from `tideline scripts`
(cron or by hand), not from a model.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from tideline.analysis.attention import heatmap
from tideline.analysis.scanner import scan_unindexed
from tideline.errors import TidelineError
from tideline.mcp._lock import shared_lock

if TYPE_CHECKING:
    from tideline.app import Tideline
    from tideline.mcp.server import TidelineServer

READ_ONLY = {
    "read_only_hint": True,
    "destructive_hint": False,
    "idempotent_hint": True,
    "open_world_hint": False,
}
ALIASES: dict[str, dict[str, str]] = {
    "memory_attention_heatmap": {
        **dict.fromkeys(("after", "from", "start"), "since"),
        **dict.fromkeys(("before", "to", "end"), "until"),
    },
    "memory_scan_unindexed": {
        **dict.fromkeys(("gap", "gap_minutes", "max_gap"), "max_gap_minutes"),
        **dict.fromkeys(("since", "cutoff"), "after"),
    },
}


def register(server: TidelineServer, app: Tideline) -> None:
    """Add the script-layer tools to `server`, reading `app.db`."""
    agent = app.settings.agent_name
    lock = shared_lock(app)
    server.tool_aliases.update(ALIASES)

    def call(fn: Any) -> dict[str, Any]:
        with lock:
            try:
                return fn()  # type: ignore[no-any-return]
            except TidelineError as exc:
                raise ToolError(" ".join(str(exc).split())) from exc

    @server.tool(
        name="memory_attention_heatmap",
        title="Where retrieval's attention goes",
        description=(
            f"Which themes of {agent}'s memory retrieval actually reaches: hits per memory cluster "
            "(with a label of its topics) in a time window, and the 'attention deserts' — "
            "clusters never retrieved. Mechanical data, not self-report: use it when reflecting "
            "on blind spots (e.g. in the DREAM combing layer)."
        ),
        annotations=ToolAnnotations(title="Where retrieval's attention goes", **READ_ONLY),
    )
    def memory_attention_heatmap(
        since: Annotated[
            str | None, Field(description="Window start, ISO date or time (default: all).")
        ] = None,
        until: Annotated[
            str | None, Field(description="Window end, ISO date or time (default: now).")
        ] = None,
    ) -> dict[str, Any]:
        return call(lambda: heatmap(app.memory, since, until).to_dict())

    @server.tool(
        name="memory_scan_unindexed",
        title="Find context not yet remembered",
        description=(
            f"Layer 0 of {agent}'s dream cycle: the conversation turns newer than the latest "
            "memory that no memory links to, in chunks of one sitting, plus memories without "
            "source links. Read the markdown, decide what is worth keeping, and write it with "
            "memory_write, filling source_links with the turn ids shown."
        ),
        annotations=ToolAnnotations(title="Find context not yet remembered", **READ_ONLY),
    )
    def memory_scan_unindexed(
        max_gap_minutes: Annotated[
            float, Field(ge=0, le=10_080, description="Silence that starts a new chunk.")
        ] = 30,
        after: Annotated[
            str | None,
            Field(description="Only turns after this time (default: the latest memory's)."),
        ] = None,
        max_chars: Annotated[
            int, Field(ge=20, le=100_000, description="Shorten each turn to this length.")
        ] = 500,
    ) -> dict[str, Any]:
        def scan() -> dict[str, Any]:
            result = scan_unindexed(
                app.memory, max_gap=timedelta(minutes=max_gap_minutes), after=after
            )
            return {**result.summary(), "markdown": result.to_markdown(max_chars=max_chars)}

        return call(scan)
