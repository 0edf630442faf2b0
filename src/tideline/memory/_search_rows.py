"""One search's questions about the rows of memory's two owners, each asked of the server once.

A turn search asks the turns' owner about its candidates again and again: their texts (the
keyword check, the own-words and numbers levers, the rare words' check), speakers (the speaker
lever), exchanges (the answer and reply levers), neighbours (the neighbours lever), sessions, and
at the end the hits it shows; its memory keys ask the narratives' owner their texts and their
source links. On PostgreSQL each question was a statement waiting on the server (issue 34 counts
them). Here the first question about some records asks everything the search will ask of them
(`RawContext.rows_of`, `Narratives.texts_and_sources`) and later questions about those are
answered from that; a question about others (a turn a memory key lifted) asks once more, for
them only. One object per search: nothing outlives it, so nothing goes stale.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tideline.memory._narratives import Narratives
from tideline.memory._raw import Exchange, RawContext, TurnRow, index_text
from tideline.memory._results import Turn


class TurnRows:
    """One search's view of the turns it asks about (see the module docstring): the same
    answers as `RawContext`'s methods of the same names."""

    def __init__(self, raw: RawContext) -> None:
        self._raw = raw
        self._rows: dict[int, TurnRow] = {}
        self._asked: set[int] = set()

    def _of(self, ids: Iterable[int]) -> list[TurnRow]:
        wanted = [int(i) for i in ids]
        missing = [i for i in dict.fromkeys(wanted) if i not in self._asked]
        if missing:
            found = self._raw.rows_of(missing)  # the next turns' rows too: whole rows as well
            self._rows.update(found)
            self._asked.update(missing, found)
        return [self._rows[i] for i in wanted if i in self._rows]

    def get(self, ids: Iterable[int]) -> list[Turn]:
        return [r.turn for r in self._of(ids)]

    def texts(self, ids: Sequence[int]) -> dict[int, str]:
        return {r.id: index_text(r.speaker, r.said) for r in self._of(ids) if r.live}

    def speakers_of(self, ids: Sequence[int]) -> dict[int, str]:
        return {r.id: speaker for r in self._of(ids) if (speaker := r.speaker) is not None}

    def sessions_of(self, ids: Sequence[int]) -> dict[int, int]:
        return {r.id: r.session_id for r in self._of(ids)}

    def neighbours_of(self, ids: Sequence[int]) -> dict[int, list[int]]:
        return {r.id: near for r in self._of(ids) if (near := r.neighbours)}

    def exchanges_of(self, ids: Sequence[int]) -> dict[int, Exchange]:
        return {r.id: r.exchange for r in self._of(ids)}

    def answers(self, ids: Sequence[int]) -> dict[int, int]:
        """The turn answering each of these that asks (the answer lever)."""
        return {i: e.answer for i, e in self.exchanges_of(ids).items() if e.answer is not None}

    def replies(self, ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """The question about each of these and its speaker's reply (the reply lever)."""
        return {i: e.reply for i, e in self.exchanges_of(ids).items() if e.reply is not None}


class NarrativeRows:
    """One search's view of the narratives its memory keys ask about: their texts (`texts`)
    and source links (`sources`), read together."""

    def __init__(self, narratives: Narratives) -> None:
        self._narratives = narratives
        self._texts: dict[int, str] = {}
        self._links: dict[int, list[int]] = {}
        self._asked: set[int] = set()

    def _ask(self, ids: Iterable[int]) -> list[int]:
        wanted = [int(i) for i in ids]
        missing = [i for i in dict.fromkeys(wanted) if i not in self._asked]
        if missing:
            texts, links = self._narratives.texts_and_sources(missing)
            self._texts.update(texts)
            self._links.update(links)
            self._asked.update(missing)
        return wanted

    def texts(self, ids: Sequence[int]) -> dict[int, str]:
        return {i: self._texts[i] for i in self._ask(ids) if i in self._texts}

    def sources(self, ids: Sequence[int]) -> dict[int, list[int]]:
        """Each narrative's source turns (`Narrative.source_links`)."""
        return {i: self._links[i] for i in self._ask(ids) if i in self._links}
