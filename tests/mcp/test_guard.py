"""Which hosts count as loopback, which Origins pass, and when `serve` refuses to bind."""

from __future__ import annotations

import secrets

import pytest

from tideline.errors import InvalidInput
from tideline.serve import check_bind
from tideline.serve._guard import host_allowed, is_loopback, origin_allowed


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.com", "10.0.0.1"])
def test_public_hosts(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "http://localhost",
        "http://localhost:5173",
        "https://127.0.0.1:8765",
        "http://[::1]:3000",
        "http://127.0.0.2",
        "http://127.8.9.10:8080",
        "http://a.localhost",
        "https://app.localhost:5173",
    ],
)
def test_allowed_origins(origin: str | None) -> None:
    assert origin_allowed(origin)


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://localhost.evil.example",
        "http://127.0.0.1.nip.io",
        "null",
        "file://",
        "chrome-extension://abc",
    ],
)
def test_refused_origins(origin: str) -> None:
    assert not origin_allowed(origin)


@pytest.mark.parametrize(
    "host",
    ["localhost", "localhost:8765", "127.0.0.1:8765", "127.0.0.2", "[::1]:80", "a.localhost"],
)
def test_loopback_host_headers(host: str) -> None:
    assert host_allowed(host)


@pytest.mark.parametrize(
    "host", [None, "", "evil.example", "evil.example:8765", "127.0.0.1.nip.io", "[::1", "0.0.0.0"]
)
def test_foreign_host_headers(host: str | None) -> None:
    assert not host_allowed(host)


def test_public_bind_needs_a_token() -> None:
    with pytest.raises(InvalidInput, match="TIDELINE_TOKEN"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", secrets.token_urlsafe(32))
    check_bind("127.0.0.1", None)


@pytest.mark.parametrize("token", [" ", "\t", " padded-token "])
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_a_token_no_client_can_send_is_refused_at_start(token: str, host: str) -> None:
    with pytest.raises(InvalidInput, match=r"TIDELINE_TOKEN is (blank|padded)") as err:
        check_bind(host, token)
    assert "secrets.token_urlsafe(32)" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("token", ["x", "a-token", "a" * 64, "0123456789" * 3])
def test_a_guessable_token_is_refused_off_loopback(token: str) -> None:
    with pytest.raises(InvalidInput, match="too easy to guess") as err:
        check_bind("0.0.0.0", token)
    assert "secrets.token_urlsafe(32)" in str(err.value)
    check_bind("127.0.0.1", token)  # on loopback the token is a convenience, any will do
