"""Request bodies are bounded before anything reads them: a cap per route, checked at the door.

A body the server would refuse anyway (a 300 MB narrative, where a gesture is 500 characters)
must not be read, held and parsed first. `read_capped` runs in the guard, after the token
check and before the app: a `Content-Length` over the route's cap is answered 413 at once,
unread; a body without one (chunked) is read only up to the cap, then refused the same way.
A body within the cap is read whole and handed on to the app, which reads it as usual.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.types import Message, Receive, Scope

#: The body cap of a request, in bytes, by its method and path.
BodyLimit = Callable[[str, str], int]
KIB = 1024
MIB = 1024 * KIB


def size(n: int) -> str:
    """`1 MiB`, `64 KiB`, `12.1 MiB`: a cap as a person reads it."""
    if n >= MIB:
        return f"{n / MIB:.1f}".removesuffix(".0") + " MiB"
    return f"{n / KIB:.0f} KiB" if n >= KIB else f"{n} bytes"


def too_large(scope: Scope, limit: int) -> str:
    return (
        f"the request body is larger than {size(limit)}, the most {scope['method']} "
        f"{scope['path']} takes; send a smaller one (the limits: docs/web.md)"
    )


async def read_capped(
    scope: Scope, headers: Headers, receive: Receive, limit: int
) -> Receive | None:
    """A `receive` that replays the body read here, or None when the body is over `limit`
    (declared or read so far); a disconnect on the way is handed on to the app."""
    declared = headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    read = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: the app will see it
            return _replay([message], receive)
        chunk = message.get("body", b"")
        read += len(chunk)
        if read > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body: Message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
    return _replay([body], receive)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return replay
