"""`tideline.library.__all__` lists exactly its public names."""

from __future__ import annotations

import tideline.library as library


def test_all_matches_public_names() -> None:
    public = {n for n in vars(library) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(library, n)).__name__ == "module"}
    assert set(library.__all__) == public - submodules
