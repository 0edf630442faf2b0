"""The script-layer tools: `memory_attention_heatmap` and `memory_scan_unindexed`.

Both are read only and map straight onto `tideline.analysis.attention.heatmap` and
`tideline.analysis.scanner.scan_unindexed` (`tideline.serve.CALLS`); the rebuilds themselves run from `tideline scripts`
(cron or by hand), not from a model.
"""

from __future__ import annotations

from mcp_types import ToolAnnotations

from tideline.fields import ATTENTION_HEATMAP, SCAN_UNINDEXED
from tideline.mcp._tool_server import READ_ONLY, Tool, ToolServer

TOOLS = (
    Tool(
        ATTENTION_HEATMAP,
        "Which themes of {agent}'s memory retrieval actually reaches: hits per memory cluster "
        "(with a label of its topics) in a time window, and the 'attention deserts' — "
        "clusters never retrieved. Mechanical data, not self-report: use it when reflecting "
        "on blind spots (e.g. in the DREAM combing layer).",
        ToolAnnotations(
            title="Where retrieval's attention goes", idempotent_hint=True, **READ_ONLY
        ),
    ),
    Tool(
        SCAN_UNINDEXED,
        "Layer 0 of {agent}'s dream cycle: the conversation turns newer than the latest "
        "memory that no memory links to, in chunks of one sitting, plus memories without "
        "source links. Read the markdown, decide what is worth keeping, and write it with "
        "memory_write, filling source_links with the turn ids shown.",
        ToolAnnotations(title="Find context not yet remembered", idempotent_hint=True, **READ_ONLY),
    ),
)


def register(server: ToolServer) -> None:
    """Add the script-layer tools to `server`, reading the app's memory."""
    for tool in TOOLS:
        server.add_command(tool)
