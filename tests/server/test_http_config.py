"""langgraph.json's `http` served: the user's app and its routes first, CORS, parts of the
API turned off, the request headers a run's config carries; keys graphrun does not act on
are named. And `/info`, Private Network Access for Studio."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphrun.server.config import ConfigError, http_options, load_config, unused_keys
from tests.server.conftest import _ApiHost

APP = '''
from fastapi import FastAPI
from typing_extensions import TypedDict
from graphrun import START, StateGraph
from graphrun.config import get_config

app = FastAPI()
STARTED = []

@app.get("/hello")
def hello():
    return {"hello": "from the user's app"}

@app.get("/info")  # the user's route wins over graphrun's
def info():
    return {"mine": True}

class S(TypedDict, total=False):
    seen: dict

def look(state):
    c = get_config()["configurable"]
    return {"seen": {k: v for k, v in c.items() if k.startswith("x-") or k == "user-agent"}}

graph = StateGraph(S).add_node("look", look).add_edge(START, "look").compile()
'''


@pytest.fixture(scope="module")
def configured(dev_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("http")
    (root / "web.py").write_text(APP)
    (root / "langgraph.json").write_text(json.dumps({
        "graphs": {"header_echo": "./web.py:graph"},
        "http": {"app": "./web.py:app", "disable_store": True,
                 "cors": {"allow_origins": ["https://app.example"], "allow_methods": ["*"],
                          "allow_headers": ["*"]},
                 "configurable_headers": {"includes": ["x-tenant*", "user-agent"],
                                          "excludes": ["x-tenant-secret"]}}}))
    host = _ApiHost(dev_server.address, load_config(root / "langgraph.json"), api_keys=(),
                    http=http_options(root / "langgraph.json"))
    yield host.url
    host.close()


async def test_the_users_routes_come_first_and_disabled_parts_are_gone(configured: str
                                                                        ) -> None:
    async with httpx.AsyncClient(base_url=configured) as http:
        assert (await http.get("/hello")).json() == {"hello": "from the user's app"}
        assert (await http.get("/info")).json() == {"mine": True}
        assert (await http.post("/store/items/search", json={})).status_code == 404
        assert (await http.post("/threads/search", json={})).status_code == 200
        pre = await http.options("/threads/search", headers={
            "Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
        assert pre.headers["access-control-allow-origin"] == "https://app.example"
        other = await http.options("/threads/search", headers={
            "Origin": "https://other.example", "Access-Control-Request-Method": "POST"})
        assert "access-control-allow-origin" not in other.headers


async def test_a_run_carries_the_headers_configurable_headers_names(configured: str
                                                                   ) -> None:
    async with httpx.AsyncClient(base_url=configured) as http:
        r = await http.post("/runs/wait", json={"assistant_id": "header_echo", "input": {}},
                            headers={"x-tenant-id": "t1", "x-tenant-region": "eu",
                                     "x-tenant-secret": "no", "x-other": "no",
                                     "user-agent": "tests/1"})
        assert r.status_code == 200, r.text
        # x-tenant-id is never carried (as LangGraph's server); excludes win over includes
        assert r.json()["seen"] == {"x-tenant-region": "eu", "user-agent": "tests/1"}


async def test_info_and_private_network_access(dev_server: Any) -> None:
    from importlib import metadata

    from examples import purchase

    host = _ApiHost(dev_server.address, {"purchase": purchase.graph}, api_keys=(), cors_localhost=True,
                    cors_origins=["https://smith.langchain.com"], private_network=True)
    try:
        async with httpx.AsyncClient(base_url=host.url) as http:
            info = (await http.get("/info")).json()
            assert info["version"] == metadata.version("graphrun")
            assert info["langgraph_py_version"] == metadata.version("langgraph")
            assert info["flags"]["assistants"] is True
            pre = await http.options("/assistants/search", headers={
                "Origin": "https://smith.langchain.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Private-Network": "true"})
            assert pre.status_code == 200, pre.text
            assert pre.headers["access-control-allow-private-network"] == "true"
            assert pre.headers["access-control-allow-origin"] == "https://smith.langchain.com"
    finally:
        host.close()


def test_keys_graphrun_does_not_act_on_are_named(tmp_path: Path) -> None:
    file = tmp_path / "langgraph.json"
    file.write_text(json.dumps({
        "graphs": {}, "python_version": "3.11", "dependencies": ["."],
        "checkpointer": {"path": "./c.py:saver"}, "store": {"index": {"dims": 8}},
        "http": {"mount_prefix": "/api", "disable_ui": True, "shiny": 1},
        "sparkles": True}))
    named = "\n".join(unused_keys(file))
    for key in ("checkpointer.path", "store.index", "http.mount_prefix", "http.shiny",
                "sparkles"):
        assert key in named
    for key in ("python_version", "dependencies", "disable_ui"):
        assert key not in named


def test_a_bad_http_section_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "langgraph.json"
    file.write_text(json.dumps({"graphs": {}, "http": {"cors": {"allow_everything": True}}}))
    with pytest.raises(ConfigError, match=r"http\.cors"):
        http_options(file)
    file.write_text(json.dumps({"graphs": {}, "http": {"app": "json:dumps"}}))
    with pytest.raises(ConfigError, match="not a Starlette or FastAPI app"):
        http_options(file)
