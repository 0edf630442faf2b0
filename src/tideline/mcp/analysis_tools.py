"""The script-layer tools: `memory_attention_heatmap` and `memory_scan_unindexed`.

Both are read only and map straight onto `tideline.analysis.attention.heatmap` and
`tideline.analysis.scanner.scan_unindexed`; the rebuilds themselves run from `tideline scripts`
(cron or by hand), not from a model.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mcp_types import ToolAnnotations

from tideline.analysis.attention import heatmap
from tideline.analysis.scanner import scan_unindexed
from tideline.fields import ATTENTION_HEATMAP, SCAN_UNINDEXED
from tideline.mcp._base import ToolServer
from tideline.serve import annotated

READ_ONLY = {
    "read_only_hint": True,
    "destructive_hint": False,
    "idempotent_hint": True,
    "open_world_hint": False,
}

Since = annotated(ATTENTION_HEATMAP, "since")
Until = annotated(ATTENTION_HEATMAP, "until")
MaxGap = annotated(SCAN_UNINDEXED, "max_gap_minutes")
After = annotated(SCAN_UNINDEXED, "after")
MaxChars = annotated(SCAN_UNINDEXED, "max_chars")


def register(server: ToolServer) -> None:
    """Add the script-layer tools to `server`, reading the app's memory."""
    agent = server.app.settings.agent_name
    server.accept(ATTENTION_HEATMAP, SCAN_UNINDEXED)

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
    def memory_attention_heatmap(since: Since, until: Until) -> dict[str, Any]:
        return server.call(
            "memory_attention_heatmap", lambda: heatmap(server.app.memory, since, until)
        )

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
        max_gap_minutes: MaxGap, after: After, max_chars: MaxChars
    ) -> dict[str, Any]:
        def scan() -> dict[str, Any]:
            gap = timedelta(minutes=max_gap_minutes)
            result = scan_unindexed(server.app.memory, max_gap=gap, after=after)
            return {**result.summary(), "markdown": result.to_markdown(max_chars=max_chars)}

        return server.call("memory_scan_unindexed", scan)
