"""langgraph.json's `store` section: `store.index` gives the in-memory store `graphrun dev`
serves semantic search (an embeddings function of a file next to langgraph.json, LangChain's
`provider:model`), `store.ttl` gives its items TTLs; through the HTTP API and to a node.
Bad values are refused naming the key; a store that keeps no TTLs refuses a put's `ttl`."""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from typing_extensions import TypedDict

from graphrun import START, StateGraph, get_store
from graphrun.server.config import ConfigError, store_from_config, unused_keys

memory = pytest.importorskip("graphrun.server.memory")
InMemoryStore = pytest.importorskip("langgraph.store.memory").InMemoryStore

# Deterministic embeddings: a text's counts of four words (and a constant, so no vector
# is zero). "cat" is nearest a text about cats, "pizza" one about pizza.
EMBED = '''
VOCAB = ["cat", "dog", "pizza", "car"]
CALLS = []

def vector(text):
    return [float(text.lower().count(w)) for w in VOCAB] + [0.1]

def embed(texts):
    CALLS.append(list(texts))
    return [vector(t) for t in texts]

async def aembed(texts):
    return [vector(t) for t in texts]

not_callable = 42
'''


class Clock:
    """The store's clock, in seconds, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += minutes * 60


def _config(tmp_path: Path, store: Any, **extra: Any) -> Path:
    (tmp_path / "emb.py").write_text(EMBED)
    file = tmp_path / "langgraph.json"
    file.write_text(json.dumps({"graphs": {}, "store": store, **extra}))
    return file


INDEX = {"embed": "./emb.py:embed", "dims": 5, "fields": ["text"]}


@pytest.fixture
async def api() -> AsyncIterator[Callable[[Any], httpx.AsyncClient]]:
    """`api(store)`: an HTTP client on the API app serving `store` (the store routes need
    no Temporal: the app's client is lazy, on a port where nothing listens)."""
    from temporalio.client import Client

    from graphrun.client import GraphClient, data_converter
    from graphrun.server import build_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = await Client.connect(f"127.0.0.1:{port}", data_converter=data_converter,
                                  lazy=True)
    opened: list[httpx.AsyncClient] = []

    def make(store: Any) -> httpx.AsyncClient:
        app = build_app(GraphClient(client), {}, store=store, api_keys=[],
                        check_search_attributes=False)
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")
        opened.append(http)
        return http

    yield make
    for http in opened:
        await http.aclose()


async def _put(http: httpx.AsyncClient, ns: list[str], key: str, value: dict[str, Any],
               **extra: Any) -> None:
    answer = await http.put("/store/items", json={"namespace": ns, "key": key,
                                                  "value": value, **extra})
    assert answer.status_code == 204, answer.text


async def _search(http: httpx.AsyncClient, ns: list[str], **body: Any) -> list[dict[str, Any]]:
    answer = await http.post("/store/items/search", json={"namespace_prefix": ns, **body})
    assert answer.status_code == 200, answer.text
    return answer.json()["items"]


async def _get(http: httpx.AsyncClient, ns: list[str], key: str,
               **params: Any) -> dict[str, Any] | None:
    answer = await http.get("/store/items", params={"namespace": ".".join(ns), "key": key,
                                                    **params})
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_a_query_ranks_items_by_meaning(tmp_path: Path, api: Any) -> None:
    store = store_from_config(_config(tmp_path, {"index": INDEX}))
    assert isinstance(store, memory.TTLInMemoryStore) and store.index_config["dims"] == 5
    http = api(store)
    ns = ["docs"]
    await _put(http, ns, "pets", {"text": "my cat sleeps next to the other cat"})
    await _put(http, ns, "food", {"text": "pizza on friday, pizza on monday"})
    await _put(http, ns, "cars", {"text": "the car is red"})
    for query, nearest in (("a cat", "pets"), ("pizza", "food"), ("my car", "cars")):
        found = await _search(http, ns, query=query)
        assert found[0]["key"] == nearest, (query, found)
        scores = [i["score"] for i in found]
        assert scores == sorted(scores, reverse=True) and scores[0] > scores[1]
    # Without a query: no ranking, no scores.
    assert all("score" not in i for i in await _search(http, ns))


async def test_fields_and_a_puts_index(tmp_path: Path, api: Any) -> None:
    store = store_from_config(_config(tmp_path, {"index": INDEX}))
    http = api(store)
    ns = ["notes"]
    # Only `text` is embedded (store.index.fields): `aside` says cat, but is not read.
    await _put(http, ns, "aside", {"text": "pizza", "aside": "cat"})
    await _put(http, ns, "plain", {"text": "a cat and a dog", "aside": "pizza"})
    assert [i["key"] for i in await _search(http, ns, query="cat")] == ["plain", "aside"]
    # A put's own fields replace the store's.
    await _put(http, ns, "aside", {"text": "pizza", "aside": "cat"}, index=["aside"])
    found = await _search(http, ns, query="cat")
    assert [i["key"] for i in found] == ["aside", "plain"]
    assert found[0]["score"] == pytest.approx(1.0)
    # A put with index: false drops the vectors the item had.
    await _put(http, ns, "aside", {"text": "pizza", "aside": "cat"}, index=False)
    found = await _search(http, ns, query="cat")
    assert [i["key"] for i in found] == ["plain", "aside"] and "score" not in found[1]
    # index: false: kept and read, but never embedded, so a query does not find it by
    # its meaning: no score, after every embedded item (only filling the limit, as
    # LangGraph's in-memory store does), even when its text is the query itself.
    ns = ["more-notes"]
    await _put(http, ns, "hidden", {"text": "cat"}, index=False)
    await _put(http, ns, "far", {"text": "a dog and a car, and a cat"})
    await _put(http, ns, "near", {"text": "a cat and a dog"})
    assert (await _get(http, ns, "hidden"))["value"] == {"text": "cat"}
    found = await _search(http, ns, query="cat", limit=2)
    assert [i["key"] for i in found] == ["near", "far"]
    found = await _search(http, ns, query="cat")
    assert [i["key"] for i in found] == ["near", "far", "hidden"]
    assert "score" not in found[-1] and all("score" in i for i in found[:-1])
    # index: true is not LangGraph's (false, a list of fields or null).
    bad = await http.put("/store/items", json={"namespace": ns, "key": "x",
                                               "value": {"text": "cat"}, "index": True})
    assert bad.status_code == 422


async def test_items_expire_and_reads_refresh_them(tmp_path: Path, api: Any) -> None:
    clock = Clock()
    store = store_from_config(_config(tmp_path, {
        "index": INDEX, "ttl": {"default_ttl": 1, "refresh_on_read": True}}), clock=clock)
    http = api(store)
    ns = ["memories", uuid.uuid4().hex[:8]]
    await _put(http, ns, "read", {"text": "cat"})
    await _put(http, ns, "unread", {"text": "cat"})
    await _put(http, ns, "searched", {"text": "pizza"})
    await _put(http, ns, "long", {"text": "car"}, ttl=5)  # its own TTL, minutes
    await _put(http, ["other"], "forever", {"text": "dog"})
    store.put(("other",), "forever", {"text": "dog"}, ttl=None)  # no TTL at all
    clock.advance(0.75)
    assert await _get(http, ns, "read") is not None  # refreshed: 1 min from now
    assert await _get(http, ns, "unread", refresh_ttl="false") is not None  # not refreshed
    found = await _search(http, ns, query="pizza", limit=1)
    assert [i["key"] for i in found] == ["searched"]  # refreshed too
    clock.advance(0.5)  # 1.25 min since the puts, 0.5 since the reads
    assert await _get(http, ns, "unread") is None
    assert await _get(http, ns, "read") is not None
    keys = {i["key"] for i in await _search(http, ns, refresh_ttl=False)}
    assert keys == {"read", "searched", "long"}
    clock.advance(0.9)  # the get of "read" above refreshed it; the search did not
    assert {i["key"] for i in await _search(http, ns)} == {"read", "long"}
    clock.advance(10)
    assert await _search(http, ns) == []
    # An expired item is gone from the namespaces, and its vectors with it.
    listed = (await http.post("/store/namespaces", json={})).json()["namespaces"]
    assert ns not in listed and ["other"] in listed
    assert tuple(ns) not in store._vectors
    assert await _get(http, ["other"], "forever") is not None


async def test_refresh_on_read_false(tmp_path: Path, api: Any) -> None:
    clock = Clock()
    store = store_from_config(_config(tmp_path, {"ttl": {
        "default_ttl": 1, "refresh_on_read": False}}), clock=clock)
    assert store.index_config is None  # no store.index: no semantic search
    http = api(store)
    ns = ["t"]
    await _put(http, ns, "a", {"n": 1})
    await _put(http, ns, "b", {"n": 2})
    clock.advance(0.75)
    assert await _get(http, ns, "a") is not None  # not refreshed by default
    assert await _get(http, ns, "b", refresh_ttl="true") is not None  # asked to
    clock.advance(0.5)
    assert await _get(http, ns, "a") is None
    assert await _get(http, ns, "b") is not None
    # A put starts the TTL again.
    await _put(http, ns, "b", {"n": 3})
    clock.advance(0.9)
    assert (await _get(http, ns, "b"))["value"] == {"n": 3}
    clock.advance(0.2)
    assert await _get(http, ns, "b") is None


async def test_the_sweeper_deletes_expired_items_while_idle(tmp_path: Path) -> None:
    clock = Clock()
    store = store_from_config(_config(tmp_path, {"ttl": {
        "default_ttl": 1, "sweep_interval_minutes": 0.001}}), clock=clock)
    await store.aput(("s",), "a", {"n": 1})
    await store.aput(("s",), "b", {"n": 1}, ttl=3)
    await store.start_ttl_sweeper()
    try:
        clock.advance(2)
        for _ in range(200):  # the sweeper, not an operation, deletes it
            if "a" not in store._data.get(("s",), {}):
                break
            await asyncio.sleep(0.01)
        assert set(store._data[("s",)]) == {"b"}
        clock.advance(2)
        for _ in range(200):
            if ("s",) not in store._data:
                break
            await asyncio.sleep(0.01)
        assert ("s",) not in store._data
    finally:
        await store.stop_ttl_sweeper()
    assert store.sweep_ttl() == 0


async def test_a_store_without_ttls_refuses_a_ttl(api: Any) -> None:
    http = api(InMemoryStore())  # LangGraph's, which keeps no TTLs
    answer = await http.put("/store/items", json={"namespace": ["a"], "key": "k",
                                                  "value": {"n": 1}, "ttl": 5})
    assert answer.status_code == 422, answer.text
    assert "keeps no TTLs" in answer.json()["detail"]
    assert await _get(http, ["a"], "k") is None  # not stored without its TTL
    await _put(http, ["a"], "k", {"n": 1})  # without one, it is
    assert (await _get(http, ["a"], "k"))["value"] == {"n": 1}
    bad = await http.put("/store/items", json={"namespace": ["a"], "key": "k",
                                               "value": {}, "ttl": -1})
    assert bad.status_code == 422


async def test_embed_as_an_async_function_a_module_or_a_provider(
        tmp_path: Path, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for embed in ("./emb.py:aembed", "emb_module:embed"):
        (tmp_path / "emb_module.py").write_text(EMBED)
        store = store_from_config(_config(tmp_path, {"index": {**INDEX, "embed": embed}}))
        http = api(store)
        await _put(http, ["d"], "pets", {"text": "cat"})
        await _put(http, ["d"], "food", {"text": "pizza"})
        assert [i["key"] for i in await _search(http, ["d"], query="pizza")] == \
            ["food", "pets"], embed
    # "provider:model" is LangChain's init_embeddings (no network here: a stand-in).
    import langchain.embeddings
    from langgraph.store.base import ensure_embeddings

    asked: list[str] = []

    def init_embeddings(model: str) -> Any:
        asked.append(model)
        return ensure_embeddings(lambda texts: [[float(len(t)), 1.0] for t in texts])

    monkeypatch.setattr(langchain.embeddings, "init_embeddings", init_embeddings)
    store = store_from_config(_config(tmp_path, {"index": {
        "embed": "openai:text-embedding-3-small", "dims": 2}}))
    assert asked == ["openai:text-embedding-3-small"]
    assert store.embeddings.embed_query("abc") == [3.0, 1.0]


@pytest.mark.parametrize(("store", "key", "says"), [
    ({"index": {**INDEX, "embed": "nosuchprovider:model-1"}}, "store.index.embed",
     "not an embeddings provider"),
    ({"index": {**INDEX, "embed": "just-a-name"}}, "store.index.embed", "provider:model"),
    ({"index": {**INDEX, "embed": "./emb.py:missing"}}, "store.index.embed",
     "no attribute"),
    ({"index": {**INDEX, "embed": "./nofile.py:embed"}}, "store.index.embed",
     "no Python file"),
    ({"index": {**INDEX, "embed": "./emb.py:not_callable"}}, "store.index.embed",
     "not embeddings"),
    ({"index": {"embed": "./emb.py:embed", "fields": ["text"]}}, "store.index.dims",
     "missing"),
    ({"index": {**INDEX, "dims": "5"}}, "store.index.dims", "positive integer"),
    ({"index": {**INDEX, "fields": "text"}}, "store.index.fields", "list"),
    ({"index": {"dims": 5}}, "store.index.embed", "missing"),
    ({"index": ["embed"]}, "store.index", "object"),
    ({"ttl": {"default_ttl": -1}}, "store.ttl.default_ttl", "positive"),
    ({"ttl": {"sweep_interval_minutes": "often"}}, "store.ttl.sweep_interval_minutes",
     "positive"),
    ({"ttl": {"refresh_on_read": "yes"}}, "store.ttl.refresh_on_read", "true or false"),
    ("memory", "store", "object"),
])
def test_bad_values_are_refused_naming_the_key(tmp_path: Path, store: Any, key: str,
                                               says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        store_from_config(_config(tmp_path, store))
    message = str(caught.value)
    assert f"{key} " in message or f"{key}:" in message, message
    assert says in message, message


def test_dev_serves_the_configured_store_and_keeps_a_given_one(tmp_path: Path) -> None:
    from graphrun.cli import _dev_store

    file = _config(tmp_path, {"index": INDEX, "ttl": {"default_ttl": 2}})
    built = _dev_store(argparse.Namespace(store=None, config=str(file), graph=None))
    assert isinstance(built, memory.TTLInMemoryStore)
    assert built.index_config["fields"] == ["text"] and built.ttl_config["default_ttl"] == 2
    assert unused_keys(file, store_built=True) == []
    # A store given with --store is the user's: the section is named as not used.
    given = _dev_store(argparse.Namespace(store="tests.server.test_store_config:GIVEN",
                                          config=str(file), graph=None))
    assert given is GIVEN
    named = "\n".join(unused_keys(file))
    assert "store.index" in named and "store.ttl" in named
    file.write_text(json.dumps({"graphs": {}, "store": {
        "path": "./s.py:store", "index": {**INDEX, "distance_type": "l2"}}}))
    named = "\n".join(unused_keys(file, store_built=True))
    assert "store.path" in named and "store.index.distance_type" in named
    assert "store.index:" not in named
    # Without a store section: a plain one, TTLs kept for puts that ask.
    plain = _dev_store(argparse.Namespace(store=None, config=None, graph=["x:y"]))
    assert isinstance(plain, memory.TTLInMemoryStore) and plain.index_config is None
    assert plain.supports_ttl and plain.ttl_config is None


GIVEN = InMemoryStore()


class _Ask(TypedDict, total=False):
    query: str
    nearest: str


async def _nearest(state: _Ask) -> dict[str, Any]:
    found = await get_store().asearch(("kb",), query=state["query"], limit=1)
    return {"nearest": found[0].key if found else ""}


nearest = StateGraph(_Ask).add_node("nearest", _nearest).add_edge(START, "nearest").compile(
    name="nearest")


async def test_a_node_searches_the_configured_store_by_meaning(dev_server: Any,
                                                               tmp_path: Path) -> None:
    from langgraph_sdk import get_client

    from tests.server.conftest import _ApiHost

    store = store_from_config(_config(tmp_path, {"index": INDEX}))
    host = await asyncio.to_thread(_ApiHost, dev_server.address, {"nearest": nearest},
                                   store=store)
    try:
        client = get_client(url=host.url)
        await client.store.put_item(["kb"], key="pets", value={"text": "cat and cat"})
        await client.store.put_item(["kb"], key="food", value={"text": "pizza"})
        for query, key in (("cat", "pets"), ("pizza", "food")):
            out = await client.runs.wait(None, "nearest", input={"query": query})
            assert out["nearest"] == key
    finally:
        await asyncio.to_thread(host.close)
