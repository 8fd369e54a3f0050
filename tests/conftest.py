"""Shared fixtures: one dev server per session, a client on it, a fresh task queue per test.

Markers are applied by folder (tests/unit -> ``unit`` and so on), so
``pytest -m unit`` runs only the fast tests without any server.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from graphrun.devserver import DevServer, temporal_cli_path, test_server_path

_TESTS_DIR = Path(__file__).parent
_FOLDER_MARKERS = {
    "unit": "unit",
    "conformance": "conformance",
    "temporal": "temporal",
    "replay": "replay",
    "timeskip": "timeskip",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Modules with a slow test first: `make test` deals out whole modules (xdist's
    # loadscope, in this order), so the long ones start early and the short ones fill in
    # at the end, instead of one worker running a 50 s test alone after the others.
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)
    for item in items:
        try:
            folder = item.path.relative_to(_TESTS_DIR).parts[0]
        except ValueError:
            continue
        marker = _FOLDER_MARKERS.get(folder)
        if marker is not None:
            item.add_marker(getattr(pytest.mark, marker))


@pytest.fixture(scope="session")
def dev_server() -> Iterator[DevServer]:
    """A headless, in-memory Temporal dev server shared by the whole session."""
    try:
        temporal_cli_path()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    with DevServer(ui=False) as server:
        yield server


@pytest.fixture(scope="session")
async def temporal_client(dev_server: DevServer) -> AsyncIterator[Client]:
    """A client on the session dev server, using graphrun's pydantic converter."""
    client = await Client.connect(dev_server.address, data_converter=pydantic_data_converter)
    yield client


@pytest.fixture
def task_queue() -> str:
    """A task queue no other test uses, so workers never steal each other's tasks."""
    return f"tq-{uuid.uuid4()}"


@pytest.fixture(scope="session")
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """The Java time-skipping test server: timers fire as soon as workflows are idle."""
    try:
        path = test_server_path()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=path, data_converter=pydantic_data_converter
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture(scope="session")
async def graph_worker(temporal_client: Client) -> AsyncIterator[str]:
    """One graphrun worker for the session; tests register graphs under unique names.

    Yields its task queue. The graph registry is looked up at run time, so graphs
    registered after the worker started are served too.
    """
    from typing import TypedDict

    from graphrun import START, StateGraph
    from graphrun.worker import create_worker

    class _S(TypedDict):
        x: int

    placeholder = StateGraph(_S).add_node("n", lambda s: s).add_edge(START, "n")
    queue = f"graphrun-tests-{uuid.uuid4()}"
    worker = create_worker(temporal_client, {"_placeholder": placeholder.compile(name="_p")},
                           task_queue=queue)
    async with worker:
        yield queue
