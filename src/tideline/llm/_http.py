"""The HTTP transport under the OpenAI client: an answer is bounded in size and time before parsing.

A model server is trusted with nothing: an answer body over `max_body` bytes stops being read
at that size (`AnswerTooLarge`), and one still arriving after `deadline` seconds — a server that
trickles an endless stream one byte at a time defeats any per-read timeout — stops there
(`AnswerTooSlow`). Both are `openai.OpenAIError`s, so the openai package passes them through
unretried and unwrapped, and the backend turns them into one line naming the endpoint and step.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx2
import openai

MAX_BODY = 2 * 1024 * 1024  # bytes: 2,000 tokens of JSON are ~10 kB; no honest answer is near


class AnswerTooLarge(openai.OpenAIError):
    def __init__(self, size: int) -> None:
        super().__init__(f"over {size:,} bytes")
        self.size = size


class AnswerTooSlow(openai.OpenAIError):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"still arriving after {seconds:g}s")
        self.seconds = seconds


class _Capped(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, max_body: int, deadline: float, limit: float):
        self.inner, self.max_body, self.deadline, self.limit = inner, max_body, deadline, limit

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self.inner:
            seen += len(chunk)
            if seen > self.max_body:
                raise AnswerTooLarge(self.max_body)
            if time.monotonic() > self.deadline:
                raise AnswerTooSlow(self.limit)
            yield chunk

    def close(self) -> None:
        self.inner.close()


class BoundedTransport(httpx2.BaseTransport):
    """`HTTPTransport` whose response bodies are cut at `max_body` bytes and `seconds`."""

    def __init__(self, seconds: float, max_body: int = MAX_BODY) -> None:
        self.inner = httpx2.HTTPTransport()
        self.seconds, self.max_body = seconds, max_body

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = time.monotonic() + self.seconds
        response = self.inner.handle_request(request)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            response.close()
            raise AnswerTooLarge(self.max_body)
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _Capped(response.stream, self.max_body, deadline, self.seconds)
        return response

    def close(self) -> None:
        self.inner.close()


def http_client(seconds: float, max_body: int = MAX_BODY) -> httpx2.Client:
    """The client the OpenAI package sends through."""
    return openai.DefaultHttpxClient(transport=BoundedTransport(seconds, max_body))
