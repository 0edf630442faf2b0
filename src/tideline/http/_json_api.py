"""`JsonApi`: JSON requests to an OpenAI-compatible server, retried by one policy, bounded answers.

The policy (`Retries`): what a later try can fix — a connection error, a 429, a 5xx, a 2xx body
that is not complete JSON (cut short) — is tried again up to `retries` times, waiting the
server's Retry-After (or retry-after-ms) when it sends one, else `backoff` doubling; every wait
is capped at `backoff_max`. A timeout is not retried: a server too slow once is slow again, and
the caller names the setting to raise. A caller may mark an error answer `final` (a 500 that
names the response format: retrying cannot help).

A server is trusted with nothing: an answer body is read at most to `max_body` bytes (a declared
Content-Length over it is not read at all) and for at most `timeout` seconds in all — a server
that trickles an endless body one byte at a time defeats any per-read timeout — before it is
parsed.

Nothing here raises for what a server did: `post` returns the final `Answer` (a 2xx with its
JSON, or an error status retrying would not change) or `Unanswered` saying why there is none,
and each caller words its own one-line error (which endpoint, which step, which setting).
"""

from __future__ import annotations

import functools
import json
import ssl
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx

MAX_BODY = 2 * 1024 * 1024  # bytes: 2,000 tokens of JSON are ~10 kB; no honest chat answer is near


@dataclass(frozen=True)
class Retries:
    """How often and how long to wait: `retries` more tries, `backoff` doubling to `backoff_max`."""

    retries: int = 2
    backoff: float = 0.5
    backoff_max: float = 30.0

    def wait(self, attempt: int, asked: float | None) -> float:
        """Seconds before try `attempt + 1`: what the server asked, else the backoff; capped."""
        wait = self.backoff * 2**attempt if asked is None else asked
        return max(0.0, min(wait, self.backoff_max))


@dataclass(frozen=True)
class Answer:
    """A final HTTP answer: its status, its JSON (`data`, None when it is not JSON) and headers."""

    status: int
    data: Any
    text: str
    headers: httpx.Headers

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def detail(self) -> str:
        """The server's own words for an error, on one line: `error.message`, else the body."""
        inner = self.data.get("error", self.data) if isinstance(self.data, dict) else None
        message = inner.get("message") if isinstance(inner, dict) else inner
        return " ".join(str(message or self.text).split())[:300]


@dataclass(frozen=True)
class Unanswered:
    """No usable answer: `timeout` (never retried), `too_large` (not read further), or `failed`:
    the last of `tries` tries failed as `last` ("HTTP 503", "connection failed: ConnectError")."""

    why: Literal["timeout", "too_large", "failed"]
    tries: int
    last: str = ""


@functools.cache
def _tls() -> ssl.SSLContext:
    """One verifying TLS context for every client of the process: each new one reads the CA
    bundle again (0.1 s, paid by every CLI call and every app that talks to a model)."""
    return httpx.create_ssl_context()


class JsonApi:
    """One server at `base_url`; `post` takes a path below it (`/embeddings`)."""

    def __init__(
        self,
        base_url: str,
        api_key: str = "",
        *,
        timeout: float,
        retries: Retries,
        max_body: int = MAX_BODY,
    ) -> None:
        self.url = base_url.rstrip("/")
        self.timeout, self.max_body = timeout, max_body
        self.retries = Retries(
            max(0, retries.retries), max(0.0, retries.backoff), max(0.0, retries.backoff_max)
        )
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            timeout=timeout, headers=auth, follow_redirects=True, verify=_tls()
        )
        weakref.finalize(self, self._http.close)  # its sockets go with the client

    def post(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        final: Callable[[Answer], bool] | None = None,
    ) -> Answer | Unanswered:
        """The answer to `body`, retried by the policy; `final(answer)` stops retrying an error."""
        last = ""
        for attempt in range(self.retries.retries + 1):
            asked: float | None = None
            got = self._send("POST", self.url + path, body, headers, self.timeout)
            if isinstance(got, Unanswered):
                if got.why != "failed":
                    return Unanswered(got.why, attempt + 1)
                last = got.last
            elif not _transient(got.status) or (final is not None and final(got)):
                return got
            else:
                last, asked = f"HTTP {got.status}", _retry_after(got.headers)
            if attempt < self.retries.retries:
                time.sleep(self.retries.wait(attempt, asked))
        return Unanswered("failed", self.retries.retries + 1, last)

    def get(self, url: str, *, timeout: float) -> Any:
        """The JSON of a 200 answer to `GET url` (absolute), or None; one try, for probes."""
        got = self._send("GET", url, None, None, min(self.timeout, timeout))
        return got.data if isinstance(got, Answer) and got.status == 200 else None

    def close(self) -> None:
        self._http.close()

    def _send(
        self,
        method: str,
        url: str,
        body: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
        seconds: float,
    ) -> Answer | Unanswered:
        """One try; a failure a retry may fix is `failed` with `tries=1`."""
        deadline = time.monotonic() + seconds
        try:
            with self._http.stream(
                method, url, json=body, headers=headers, timeout=seconds
            ) as resp:
                raw = self._read(resp, deadline)
        except httpx.TimeoutException:
            return Unanswered("timeout", 1)
        except httpx.HTTPError as exc:  # refused, reset, cut before its promised length
            return Unanswered("failed", 1, f"connection failed: {type(exc).__name__}")
        if isinstance(raw, Unanswered):
            return raw
        ok = 200 <= resp.status_code < 300
        try:
            data = json.loads(raw)
        except ValueError as exc:
            if ok:  # a success that is not JSON was cut short (or was never an API answer)
                return Unanswered("failed", 1, _not_json(exc))
            data = None
        text = raw[:4096].decode("utf-8", "replace")
        return Answer(resp.status_code, data, text, resp.headers)

    def _read(self, resp: httpx.Response, deadline: float) -> bytes | Unanswered:
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            return Unanswered("too_large", 1)
        chunks: list[bytes] = []
        seen = 0
        for chunk in resp.iter_bytes():
            seen += len(chunk)
            if seen > self.max_body:
                return Unanswered("too_large", 1)
            if time.monotonic() > deadline:
                return Unanswered("timeout", 1)
            chunks.append(chunk)
        return b"".join(chunks)


def _transient(status: int) -> bool:
    """A status a later try may not get: rate limited, or the server failed."""
    return status == 429 or status >= 500


def _not_json(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"the answer body was not complete JSON ({exc.msg} at byte {exc.pos})"
    return "the answer body was not JSON text"


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms or Retry-After), if it said."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) * scale)
        except (KeyError, ValueError):
            continue
    return None
