"""Wrong tokens slowed down: after a few wrong bearer tokens or login tokens from one client
within a minute, each further wrong one is answered 429 with `Retry-After` (issue 31: 300 wrong
login tokens took 5.4 s, 300 wrong bearer tokens 0.5 s, every one a plain 401).

The right token is never refused, throttled or not: refusing it would let anyone who can reach
the port (on a loopback bind, any local program, sharing the user's address) lock the user out
for free. The throttle tells a guesser to wait and makes the guessing visible (one warning when a
client starts being throttled); what keeps a guesser out is the token's length (the server's own
is 32 random bytes, far past what any rate can search). Times come from the clock seam, so tests
move a `ManualClock` instead of sleeping.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict, deque

from tideline.clock import Clock

log = logging.getLogger("tideline.serve")

#: Wrong tokens a client may send within `WINDOW` seconds before it is told to wait.
FREE = 10
WINDOW = 60.0
#: Clients remembered at most (the least recently wrong are forgotten first).
CLIENTS = 4096


class Throttle:
    """Wrong tokens per client address (see the module docstring)."""

    def __init__(self, clock: Clock, free: int = FREE, window: float = WINDOW):
        self._clock = clock
        self._free = free
        self._window = window
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def wrong(self, client: str) -> int | None:
        """Count a wrong token from `client`: the seconds it must wait before the next try
        (its `Retry-After`), or None while it is within its free tries."""
        now = self._clock().timestamp()
        with self._lock:
            times = self._failures.pop(client, None) or deque(maxlen=self._free + 1)
            while times and times[0] <= now - self._window:
                times.popleft()
            crossed = len(times) == self._free
            times.append(now)
            self._failures[client] = times  # the most recently wrong last
            while len(self._failures) > CLIENTS:
                self._failures.popitem(last=False)
            if len(times) <= self._free:
                return None
            wait = max(1, math.ceil(times[0] + self._window - now))
        if crossed:
            log.warning(
                "%s sent %d wrong tokens within %g s: answered 429 until it waits",
                client,
                self._free + 1,
                self._window,
            )
        return wait
