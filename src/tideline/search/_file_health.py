"""Every byte of the disposable search files beside an SQLite database checked against their
seals (`_seal`): what `doctor` reports and `doctor --repair` deletes, so the next build makes
them again from the database (the truth)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tideline.search._lexical_file import LexicalFile, lexical_folder
from tideline.search._vector_file import damaged_generation, vector_folder


def damaged_search_files(
    database: Path, names: Sequence[str], *, discard: bool = False
) -> list[tuple[Path, str]]:
    """(folder, what is wrong) of each damaged vector or lexical file of the indexes `names`
    beside `database`; `discard` deletes each one found (it is rebuilt from the database)."""
    found = []
    for name in names:
        vectors = damaged_generation(vector_folder(database), name, discard_it=discard)
        lexical = LexicalFile(lexical_folder(database), name, database).check(discard=discard)
        found += [d for d in (vectors, lexical) if d is not None]
    return found
