"""Every LangGraph graph a test compiles runs on graphrun (see routing.py).

In-process ("local") for every test. The interrupt tests of prebuilt/ and agents/
(a name with "interrupt", or a body that resumes with `Command(resume=...)`)
run a second time on Temporal ("temporal"): the same body, the graph served by a graphrun
worker on the session's dev server and reached through `RemoteGraph`.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.langgraph_bridge.routing import route_compiled_graphs

_HERE = Path(__file__).parent
# graph_api/ is not: tests/langgraph_suite runs the same upstream tests on Temporal already.
ON_TEMPORAL_FOLDERS = ("prebuilt", "agents")


def _on_temporal(metafunc: pytest.Metafunc) -> bool:
    try:
        folder = Path(metafunc.definition.path).relative_to(_HERE).parts[0]
    except ValueError:
        return False
    if folder not in ON_TEMPORAL_FOLDERS:
        return False
    fn = metafunc.function
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = ""
    return "interrupt" in fn.__name__ or "Command(resume=" in source


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "_on_graphrun" not in metafunc.fixturenames or not _on_temporal(metafunc):
        return
    metafunc.parametrize("_on_graphrun", ["local", pytest.param(
        "temporal", marks=[pytest.mark.temporal])], indirect=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if params.get("_on_graphrun") != "temporal":
            continue
        gap = ON_TEMPORAL_DIFFERS.get(getattr(item, "originalname", item.name))
        if gap is not None and gap[0](params):
            item.add_marker(pytest.mark.xfail(strict=True, reason=gap[1]))


# Tests that pass in-process but not on Temporal: test name -> (which params, the gap).
ON_TEMPORAL_DIFFERS: dict[str, tuple[Any, str]] = {}


@pytest.fixture(scope="session")
def bridge_temporal_host(dev_server: Any) -> Iterator[Any]:
    from tests.langgraph_suite.temporal_driver import TemporalHost

    host = TemporalHost(dev_server.address)
    yield host
    host.close()


@pytest.fixture(autouse=True)
def _on_graphrun(request: pytest.FixtureRequest) -> Iterator[None]:
    host = None
    if getattr(request, "param", "local") == "temporal":
        host = request.getfixturevalue("bridge_temporal_host")
    with route_compiled_graphs(host):
        yield
