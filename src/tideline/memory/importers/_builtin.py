"""The built-in importers, registered like any plugin. Their modules are imported when the
importers are asked for, not when the plugins load: a search loads the plugins for their
embedders and imports no importer (issue 34: start-up)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tideline.hookspecs import hookimpl

if TYPE_CHECKING:
    from tideline.memory.importers._importer import Importer


@hookimpl
def register_importers(register: Callable[[str, Importer], None]) -> None:
    from tideline.memory.importers.chatgpt import ChatGPTImporter
    from tideline.memory.importers.claude import ClaudeImporter
    from tideline.memory.importers.letta import LettaImporter
    from tideline.memory.importers.locomo import LoCoMoImporter
    from tideline.memory.importers.mcp_memory import MCPMemoryImporter
    from tideline.memory.importers.mem0 import Mem0Importer
    from tideline.memory.importers.openai_chat import OpenAIChatImporter
    from tideline.memory.importers.tideline import TidelineImporter
    from tideline.memory.importers.transcript import TranscriptImporter

    for importer in (
        OpenAIChatImporter(),
        TranscriptImporter(),
        LoCoMoImporter(),
        ChatGPTImporter(),
        ClaudeImporter(),
        TidelineImporter(),
        MCPMemoryImporter(),
        Mem0Importer(),
        LettaImporter(),
    ):
        register(importer.name, importer)
