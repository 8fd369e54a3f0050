"""`graphrun setup` and the start check, on dev servers started without graphrun's search
attributes (each test has its own: a fresh namespace costs a few tenths of a second)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from graphrun import cli
from graphrun import namespace as ns
from graphrun.devserver import DevServer, temporal_cli_path
from graphrun.errors import SetupError
from graphrun.visibility import SEARCH_ATTRIBUTES
from tests.cli.helpers import run_cli

NAMES = list(SEARCH_ATTRIBUTES)


def _server(**options: Any) -> Iterator[DevServer]:
    _need_cli()
    # In memory, nothing to flush: no graceful shutdown (a second), SIGKILL soon.
    with DevServer(ui=False, stop_grace=0.1, **options) as server:
        yield server


def _need_cli() -> None:
    try:
        temporal_cli_path()
    except RuntimeError as exc:
        pytest.skip(str(exc))


@pytest.fixture
def bare_server() -> Iterator[DevServer]:
    """A dev server whose namespace has none of graphrun's search attributes."""
    yield from _server(search_attributes={})


@pytest.fixture
def wrong_kind_server() -> Iterator[DevServer]:
    """GraphStatus registered as Text (graphrun needs Keyword), nothing else."""
    yield from _server(search_attributes={"GraphStatus": "Text"})


async def _registered(address: str) -> dict[str, str]:
    return await ns.registered_search_attributes(await Client.connect(address))


async def _cli(*argv: str) -> int:
    """`graphrun ARGV` in-process (its own event loop, in a thread); the exit code."""
    return await asyncio.to_thread(cli.main, list(argv))


# -- the start check --------------------------------------------------------------------


async def test_start_check_names_graphrun_setup(bare_server: DevServer) -> None:
    client = await Client.connect(bare_server.address)
    with pytest.raises(SetupError) as info:
        await ns.require_search_attributes(client)
    message = str(info.value)
    assert f"graphrun setup --address {bare_server.address} --namespace default" in message
    for name, kind in SEARCH_ATTRIBUTES.items():
        assert f"{name} ({kind})" in message


async def test_worker_and_api_refuse_to_start_without_them(bare_server: DevServer) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from examples import purchase
    from graphrun.client import GraphClient
    from graphrun.server import build_app

    result = await asyncio.to_thread(
        run_cli, "worker", "--graph", "examples.purchase:graph",
        "--address", bare_server.address)
    assert result.code == 1, result
    assert "graphrun setup --address" in result.err and "GraphStatus" in result.err
    assert "ready" not in result.out

    client = await Client.connect(bare_server.address)
    app = build_app(GraphClient(client), {"purchase": purchase.graph})
    with pytest.raises(SetupError, match="graphrun setup"), TestClient(app):
        pass
    # Skipped where threads keep no search attributes (the time-skipping server), or when
    # asked to.
    for off in (build_app(GraphClient(client, search_attributes=False), {}),
                build_app(GraphClient(client), {}, check_search_attributes=False)):
        with TestClient(off) as http:
            assert http.get("/ok").status_code == 200


# -- setup ------------------------------------------------------------------------------


async def test_setup_registers_then_leaves_them_alone(bare_server: DevServer) -> None:
    client = await Client.connect(bare_server.address)
    assert await ns.check_search_attributes(client) == dict.fromkeys(NAMES, "missing")
    assert await ns.add_search_attributes(client) == dict.fromkeys(NAMES, "added")
    registered = await _registered(bare_server.address)
    assert {n: registered.get(n) for n in NAMES} == SEARCH_ATTRIBUTES
    await ns.require_search_attributes(client)  # the start check passes now
    assert await ns.add_search_attributes(client) == dict.fromkeys(NAMES, "present")
    assert await ns.check_search_attributes(client) == dict.fromkeys(NAMES, "present")


async def test_setup_command(bare_server: DevServer, capsys: pytest.CaptureFixture[str]
                             ) -> None:
    address = ["--address", bare_server.address]
    assert await _cli("setup", "--check", *address) == 1
    out, err = capsys.readouterr()
    assert "GraphStatus (Keyword): missing" in out
    assert "missing search attributes: GraphStatus (Keyword), GraphName (Keyword)" in err
    assert f"graphrun setup --address {bare_server.address} --namespace default" in err

    assert await _cli("setup", *address, "--retention", "30") == 0
    out, err = capsys.readouterr()
    for name, kind in SEARCH_ATTRIBUTES.items():
        assert f"  {name} ({kind}): added" in out
    assert "retention: 30 days (was 1 day)" in out
    assert "warning" not in out and not err

    # Again, as the real command: nothing to add, retention unchanged, --check passes.
    result = await asyncio.to_thread(run_cli, "setup", *address)
    assert result.code == 0, result
    for name, kind in SEARCH_ATTRIBUTES.items():
        assert f"  {name} ({kind}): present" in result.out
    assert "retention: 30 days\n" in result.out
    capsys.readouterr()
    assert await _cli("setup", "--check", *address) == 0
    out, err = capsys.readouterr()
    assert out.count(": present") == len(NAMES) and not err
    assert await ns.retention(await Client.connect(bare_server.address)) == timedelta(days=30)


async def test_short_retention_is_reported(bare_server: DevServer,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert await _cli("setup", "--address", bare_server.address) == 0
    out, _ = capsys.readouterr()
    assert "retention: 1 day\n" in out  # the dev server's default
    assert "warning: a retention of 1 day is short" in out
    assert "--retention 30" in out


def test_setup_flags() -> None:
    parser = cli.build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["setup", "--check", "--retention", "30"])  # one or the other
    with pytest.raises(SystemExit):
        parser.parse_args(["setup", "--retention", "0"])
    args = parser.parse_args(["setup", "--retention", "30", "--namespace", "prod"])
    assert (args.retention, args.namespace, args.check) == (30, "prod", False)


# -- a wrong kind -----------------------------------------------------------------------


async def test_wrong_kind_is_reported(wrong_kind_server: DevServer,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    client = await Client.connect(wrong_kind_server.address)
    with pytest.raises(SetupError, match="GraphStatus is registered on namespace 'default' "
                                         "as Text, graphrun needs Keyword"):
        await ns.add_search_attributes(client)
    assert "GraphName" not in await _registered(wrong_kind_server.address)  # nothing added
    with pytest.raises(SetupError, match="GraphStatus"):
        await ns.require_search_attributes(client)

    assert await _cli("setup", "--address", wrong_kind_server.address) == 1
    _, err = capsys.readouterr()
    assert err.startswith("error: search attribute GraphStatus is registered"), err


# -- Temporal Cloud: no operator API for a namespace API key ---------------------------


class _Denied:
    """A client whose operator service refuses, as Temporal Cloud does a namespace key."""

    namespace = "prod.a1b2c"

    class service_client:
        class config:
            target_host = "prod.a1b2c.tmprl.cloud:7233"

    def __init__(self, status: RPCStatusCode = RPCStatusCode.PERMISSION_DENIED,
                 on: str = "add") -> None:
        self.operator_service = self
        self.status, self.on = status, on

    async def list_search_attributes(self, request: Any) -> Any:
        if self.on == "list":
            raise RPCError("Request unauthorized.", self.status, b"")
        from temporalio.api.operatorservice.v1 import ListSearchAttributesResponse

        return ListSearchAttributesResponse()

    async def add_search_attributes(self, request: Any) -> Any:
        raise RPCError("Request unauthorized.", self.status, b"")


@pytest.mark.parametrize("on", ["list", "add"])
@pytest.mark.parametrize("status", [RPCStatusCode.PERMISSION_DENIED,
                                    RPCStatusCode.UNIMPLEMENTED])
async def test_denied_operator_api_gives_the_cloud_steps(status: RPCStatusCode,
                                                         on: str) -> None:
    with pytest.raises(ns.OperatorDeniedError) as info:
        await ns.add_search_attributes(_Denied(status, on))
    message = str(info.value)
    flags = " ".join(f'--search-attribute "{n}={k}"' for n, k in SEARCH_ATTRIBUTES.items())
    assert f"tcld namespace search-attributes add --namespace prod.a1b2c {flags}" in message
    assert "Cloud UI: Namespaces -> prod.a1b2c -> Search attributes" in message


async def test_start_check_passes_when_it_cannot_list() -> None:
    await ns.require_search_attributes(_Denied(on="list"))  # nothing to check with: go on
    with pytest.raises(SetupError, match=r"graphrun setup --address prod\.a1b2c\.tmprl\.cloud"):
        await ns.require_search_attributes(_Denied(on="add"))  # lists none: missing


async def test_setup_command_on_cloud_prints_the_steps(
        bare_server: DevServer, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def denied(client: Any) -> dict[str, str]:
        raise ns.OperatorDeniedError("cannot list the search attributes of namespace "
                                     "'default' (PERMISSION_DENIED: Request unauthorized.)")

    monkeypatch.setattr(ns, "registered_search_attributes", denied)
    assert await _cli("setup", "--address", bare_server.address) == 1
    out, err = capsys.readouterr()
    assert "retention: 1 day" in out  # still reported
    assert "PERMISSION_DENIED" in err
    assert "tcld namespace search-attributes add --namespace default " in err
    assert '--search-attribute "GraphMetadata=KeywordList"' in err
    assert "Cloud UI: Namespaces -> default -> Search attributes" in err


# -- the dev server ---------------------------------------------------------------------


async def test_dev_server_adds_them_to_an_older_database(tmp_path: Path) -> None:
    """`start-dev` registers search attributes only in a database it creates: DevServer
    adds those a file from an earlier graphrun lacks."""
    _need_cli()
    db = tmp_path / "temporal.db"
    async with DevServer(ui=False, db_filename=db,
                         search_attributes={"GraphStatus": "Keyword"}) as server:
        assert set(await _registered(server.address)) & set(NAMES) == {"GraphStatus"}
    async with DevServer(ui=False, db_filename=db, stop_grace=0.1) as server:
        registered = await _registered(server.address)
        assert {n: registered.get(n) for n in NAMES} == SEARCH_ATTRIBUTES
