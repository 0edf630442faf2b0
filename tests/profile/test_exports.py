"""`tideline.profile.__all__` lists exactly its public names, and each one resolves."""

from __future__ import annotations

import tideline.profile as profile


def test_all_matches_public_names() -> None:
    public = {n for n in vars(profile) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(profile, n)).__name__ == "module"}
    assert set(profile.__all__) == public - submodules
    assert all(hasattr(profile, n) for n in profile.__all__)
