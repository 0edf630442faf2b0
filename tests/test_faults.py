"""A few SIGKILLs at random points of `memo index`, `tideline import` and `tideline write`.

The long version (hundreds of kills, the soak, the editor save patterns) is bench/faults.py;
both use tests/kills.py. The `none` embedder keeps each process short.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kills import KILLERS, TRIALS_PER_KILL, cli_env

KILLS = 5


@pytest.mark.parametrize("command", sorted(KILLERS))
def test_kill_at_random_points_loses_nothing(tmp_path: Path, command: str) -> None:
    tally = KILLERS[command](tmp_path, cli_env(tmp_path), KILLS)
    assert tally.killed == KILLS or tally.trials == TRIALS_PER_KILL * KILLS, tally.figure()
    assert tally.killed > 0 and tally.failed_trials == 0, tally.figure()
