"""LangGraph SDK's own integration suite, served by graphrun.

The `langgraph-sdk` sdist ships `tests/integration/` (pytest `-m integration`, the
server's URL from `LANGGRAPH_INTEGRATION_URL`) and the hermetic graphs it runs against
(`integration/langgraph.json`). Nothing of it is vendored: the sdist of the pinned
version is downloaded at test time (`pip download --no-binary :all:`) into pytest's
cache dir, reused from there, and copied per session (the copy is where the one
adaptation is made, see `_adapt`). Its graphs are loaded through graphrun's own
langgraph.json loader (`graphrun.server.config.load_config`, what `graphrun serve
--config` uses: LangGraph objects converted with `from_langgraph`) and served by a
worker and the API on the session's dev server. test_upstream.py runs the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import _ApiHost

# The langgraph-sdk whose integration tests run. They import the installed client, so
# the installed langgraph-sdk must be this version (checked, see `upstream`).
PINNED_SDK = "0.4.14"


@dataclass
class Upstream:
    """An unpacked langgraph-sdk sdist."""

    root: Path

    @property
    def tests(self) -> Path:
        return self.root / "tests" / "integration"

    @property
    def config(self) -> Path:
        return self.root / "integration" / "langgraph.json"


@dataclass
class Served:
    """The API's URL, the graphs of langgraph.json served, and those graphrun could not
    serve (graph id -> why)."""

    url: str
    graphs: list[str]
    unserved: dict[str, str] = field(default_factory=dict)


# -- the sdist ---------------------------------------------------------------------------
def _cache_root(config: pytest.Config) -> Path:
    cache = getattr(config, "cache", None)  # None with -p no:cacheprovider
    if cache is not None:
        return Path(cache.mkdir("langgraph-sdk"))
    return Path(tempfile.gettempdir()) / "graphrun-langgraph-sdk"


def _download(dest: Path) -> None:
    """pip download the pinned sdist and unpack it at `dest`: in a temp dir first, then
    renamed, so a half-done download is never reused. A failure fails the test."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:",
               "--no-deps", "--disable-pip-version-check", "-q",
               f"langgraph-sdk=={PINNED_SDK}", "-d", tmp]
        why = f"could not download the langgraph-sdk {PINNED_SDK} sdist, which holds " \
              f"the SDK's integration tests ({' '.join(cmd)})"
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.fail(f"{why}: {exc}", pytrace=False)
        archives = sorted(Path(tmp).glob("langgraph_sdk-*.tar.gz"))
        if proc.returncode != 0 or not archives:
            pytest.fail(f"{why}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}",
                        pytrace=False)
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(archives[0]) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(unpacked, filter="data")
            else:  # pragma: no cover - a Python without extraction filters
                tar.extractall(unpacked)
        (top,) = unpacked.iterdir()
        shutil.rmtree(dest, ignore_errors=True)
        try:
            top.rename(dest)
        except OSError:  # another session unpacked it meanwhile
            if not (dest / "tests" / "integration").is_dir():
                raise


# test_remote_graph_v3.py builds RemoteGraph(url=URL) with this URL, not
# LANGGRAPH_INTEGRATION_URL: the copy reads it from there, like the rest of the suite.
_HARD_CODED_URL = ('URL = "http://localhost:2024"',
                   'URL = __import__("os").environ.get("LANGGRAPH_INTEGRATION_URL", '
                   '"http://localhost:2024")')


def _adapt(copy: Upstream) -> None:
    module = copy.tests / "test_remote_graph_v3.py"
    if module.exists():
        text = module.read_text()
        if _HARD_CODED_URL[0] not in text:
            pytest.fail(f"{module.name} of langgraph-sdk {PINNED_SDK} no longer has "
                        f"{_HARD_CODED_URL[0]!r}: check how it finds the server and "
                        f"update _HARD_CODED_URL in {__file__}.", pytrace=False)
        module.write_text(text.replace(*_HARD_CODED_URL))


@pytest.fixture(scope="session")
def upstream(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
             ) -> Upstream:
    """This session's copy of the pinned langgraph-sdk sdist (downloaded once, into
    pytest's cache dir, then reused)."""
    installed = metadata.version("langgraph-sdk")
    if installed != PINNED_SDK:
        pytest.fail(f"langgraph-sdk {installed} is installed but the SDK's integration "
                    f"tests are pinned to {PINNED_SDK} (they import the installed "
                    f"client): set PINNED_SDK in {__file__} to {installed} and re-check "
                    f"EXPECTED_FAILURES in test_upstream.py.", pytrace=False)
    cached = Upstream(_cache_root(pytestconfig) / f"langgraph_sdk-{PINNED_SDK}")
    if not (cached.tests / "conftest.py").is_file() or not cached.config.is_file():
        _download(cached.root)
    for needed in (cached.tests / "conftest.py", cached.config,
                   cached.root / "pyproject.toml"):
        if not needed.is_file():
            pytest.fail(f"the langgraph-sdk {PINNED_SDK} sdist has no "
                        f"{needed.relative_to(cached.root)}: the integration suite is "
                        f"not where it was.", pytrace=False)
    copy = Upstream(tmp_path_factory.mktemp("langgraph-sdk") / cached.root.name)
    shutil.copytree(cached.root, copy.root, ignore=shutil.ignore_patterns("langgraph_sdk"))
    _adapt(copy)
    return copy


# -- serving its graphs ------------------------------------------------------------------
def load_graphs(config: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """langgraph.json's graphs through graphrun's loader: those it serves, and those it
    could not load (graph id -> why; the others are served all the same)."""
    from graphrun.server.config import load_config, served

    graphs = load_config(config)
    unserved = {g: graph.reason for g, graph in graphs.items() if g not in served(graphs)}
    return served(graphs), unserved


@pytest.fixture(scope="module")
def sdk_api(dev_server: Any, upstream: Upstream) -> Iterator[Served]:
    """The upstream graphs served by a graphrun worker and API, for this module only:
    the graph registry is per process and other tests serve an "agent" too, so their
    graphs are registered again afterwards."""
    from graphrun import registry

    graphs, unserved = load_graphs(upstream.config)
    if not graphs:
        pytest.fail(f"none of {upstream.config}'s graphs could be served: {unserved}",
                    pytrace=False)
    before = {name: registry.find(name) for name in graphs}
    from langgraph.store.memory import InMemoryStore

    # The store API's tests need one; the API and the worker share it (one process).
    host = _ApiHost(dev_server.address, graphs, api_keys=(), store=InMemoryStore())
    try:
        yield Served(f"http://127.0.0.1:{host.port}", sorted(graphs), unserved)
    finally:
        host.close()
        for name, graph in before.items():
            if graph is not None:
                registry.register(name, graph, registry.limits(name))


# -- running it --------------------------------------------------------------------------
def run_upstream(upstream: Upstream, url: str, junit: Path, *, per_test_timeout: float = 10.0,
                 timeout: float = 220.0) -> subprocess.CompletedProcess[str]:
    """The SDK's integration tests as upstream runs them (its pytest config, `-m
    integration`) against `url`, in a subprocess; outcomes in `junit`. A test that hangs
    fails after `per_test_timeout`; the whole run is given `timeout`, then fails this
    test with what it printed so far."""
    env = {**os.environ, "LANGGRAPH_INTEGRATION_URL": url}
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", str(upstream.tests), "-m", "integration",
           "-c", str(upstream.root / "pyproject.toml"), "--rootdir", str(upstream.root),
           "-p", "no:cacheprovider", "-p", "timeout", f"--timeout={per_test_timeout:g}",
           "--junitxml", str(junit), "-v", "--no-header", "--tb=short"]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=env,
                              cwd=upstream.root, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        pytest.fail(f"the upstream suite did not finish in {timeout:g}s "
                    f"({' '.join(cmd)}); it printed:\n{out[-6000:]}", pytrace=False)


SUMMARY: list[str] = []  # test_upstream.py's counts, shown at the end of the session


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if SUMMARY:
        terminalreporter.write_sep("-", f"langgraph-sdk {PINNED_SDK} integration suite")
        for line in SUMMARY:
            terminalreporter.write_line(line)
