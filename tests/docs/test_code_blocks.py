"""Every fenced code block in docs/**/*.md and README.md runs, parses or is a real command.

The rules (tests/docs/blocks.py finds the blocks):

- Every fence names its language: python, bash/sh/console, json/yaml/toml, or text
  (output, diagrams, file layouts: not checked).
- ```python blocks of one page run in order in one fresh namespace per page, so a later
  block uses what an earlier one defined; nothing is bound beforehand. Top-level
  ``await``, ``async for`` and ``async with`` work: each block runs in the page's one
  event loop, as a notebook cell does, so what a block starts (a worker's
  ``asyncio.create_task(worker.run())``) serves the next ones; it is stopped at the end.
  A Temporal dev server (the docs' own) is there for the blocks that connect:
  ``TEMPORAL_ADDRESS`` points at it, so ``GraphClient.connect()`` with no address reaches it, as the docs
  say it reads that variable.
- What a page's blocks need besides Temporal (a LangSmith or OTLP endpoint, an S3 bucket,
  a running API server, a chat model) the checker provides, unseen: a line
  ``<!-- setup: NAME -->`` on the page (invisible on the site and on GitHub) names a
  function of tests/docs/env.py that sets it up before the page's first block (services
  on free loopback ports, the variables the page's code reads) and ends it after the
  last. The page shows only what a user writes.
- A python block that cannot run even so has the line ``<!-- fragment: why -->`` right
  before its fence, saying why; it is compiled, not run.
- Shell blocks: every ``graphrun ...`` command must parse with
  ``graphrun.cli.build_parser().parse_args(...)``, so flags stay real; any other program
  must be on blocks.PROGRAMS. A console block's commands are its lines after ``$ ``.
- json, yaml and toml blocks must parse.

A failure names the page and the line of the block (and a Python traceback's frames
carry the page's own line numbers).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import re
import sys
import traceback
import types
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrun.devserver import DevServer
from tests.docs import env
from tests.docs.blocks import (
    DATA,
    LANGUAGES,
    PYTHON,
    ROOT,
    SHELL,
    Block,
    blocks,
    check_data,
    check_shell,
    pages,
    setups,
)

FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

# Pages whose `<!-- fragment -->` does not say why yet: its block runs with
# `<!-- setup: temporal_profile -->` on the page in place of the marker.
def _compiled(block: Block) -> object:
    # Padding puts the code on the page's own lines, for tracebacks.
    return compile("\n" * block.line + block.source, str(block.page.relative_to(ROOT)),
                   "exec", flags=FLAGS)


def _python_pages() -> list[Path]:
    return [p for p in pages()
            if any(b.lang in PYTHON and b.fragment is None for b in blocks(p))]


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


def test_fences_name_a_language_and_static_blocks_check() -> None:
    problems = []
    for page in pages():
        for block in blocks(page):
            if block.lang not in LANGUAGES:
                problems.append(f"{block.where}: fence language {block.lang!r}: use one of "
                                f"{sorted(LANGUAGES)} (text for output and diagrams)")
            elif block.fragment is not None and block.lang not in PYTHON:
                problems.append(f"{block.where}: only python blocks can be fragments")
            elif block.fragment == "":
                problems.append(f"{block.where}: a fragment says why it cannot run: "
                                f"<!-- fragment: why -->")
            elif block.lang in SHELL:
                problems += [f"{block.where}: {p}" for p in check_shell(block)]
            elif block.lang in DATA:
                problems += [f"{block.where}: {p}" for p in check_data(block)]
            elif block.lang in PYTHON:
                try:
                    _compiled(block)
                except SyntaxError as exc:
                    problems.append(f"{block.where}: does not compile: {exc}")
        for name in setups(page):
            if not callable(getattr(env, name, None)) or name.startswith("_"):
                problems.append(f"{page.relative_to(ROOT)}: <!-- setup: {name} -->: "
                                f"tests/docs/env.py has no {name}()")
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def docs_server() -> Iterator[DevServer]:
    """A dev server of the docs' own, so their thread ids ("order-42") meet no other test's."""
    with DevServer(ui=False) as server:
        yield server


@pytest.fixture
def temporal_env(docs_server: DevServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("TEMPORAL_ADDRESS", docs_server.address)
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "default")
    yield docs_server.address


@pytest.mark.parametrize("page", _python_pages(), ids=_ids(_python_pages()))
def test_python_blocks_run(page: Path, temporal_env: str, monkeypatch: pytest.MonkeyPatch,
                           tmp_path: Path) -> None:
    with contextlib.ExitStack() as stack:
        page_env = env.PageEnv(temporal_env, monkeypatch, tmp_path)
        for name in setups(page):
            stack.enter_context(contextlib.contextmanager(getattr(env, name))(page_env))
        _run_page(page)


def _run_page(page: Path) -> None:
    # A module of its own (in sys.modules while it runs), as dataclasses and type hints
    # look a class's module up.
    module = types.ModuleType("docs_page_" + re.sub(r"\W", "_", str(page.relative_to(ROOT))))
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    loop = asyncio.new_event_loop()
    try:
        for block in blocks(page):
            if block.lang not in PYTHON or block.fragment is not None:
                continue
            try:
                loop.run_until_complete(_run(block, namespace))
            except TimeoutError:
                pytest.fail(f"{block.where}: the block did not end in {BLOCK_SECONDS} s; "
                            f"what was waiting:\n{_waiting(loop)}", pytrace=False)
            except Exception:
                pytest.fail(f"{block.where}: the block raised\n{traceback.format_exc()}",
                            pytrace=False)
    finally:
        loop.run_until_complete(_stop_leftovers(namespace))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        del sys.modules[module.__name__]


LEFTOVER_SECONDS = 10  # what a page left running gets to stop once cancelled
BLOCK_SECONDS = 60  # a block that waits longer is stuck: say where, before pytest's timeout


async def _run(block: Block, namespace: dict[str, object]) -> None:
    """One block, in the page's running loop (as a notebook cell: a worker can be made)."""
    result = eval(_compiled(block), namespace)
    if inspect.iscoroutine(result):
        await asyncio.wait_for(result, BLOCK_SECONDS)


def _waiting(loop: asyncio.AbstractEventLoop) -> str:
    """The stacks of the page's tasks, to tell which await a stuck block waits on."""
    out = io.StringIO()
    for task in asyncio.all_tasks(loop):
        task.print_stack(limit=12, file=out)
    return out.getvalue()


async def _stop_leftovers(namespace: dict[str, object]) -> None:
    """What a page left running stops: its workers (`asyncio.create_task(worker.run())`)
    shut down, as a program stops them (a cancelled `Worker.run` may wait on a poll
    for good), then its other tasks are cancelled."""
    from temporalio.worker import Worker

    workers = [w for w in namespace.values() if isinstance(w, Worker) and w.is_running
               and not w.is_shutdown]
    if workers:
        await asyncio.wait([asyncio.ensure_future(w.shutdown()) for w in workers],
                           timeout=LEFTOVER_SECONDS)
    pending = asyncio.all_tasks() - {asyncio.current_task()}
    for task in pending:
        task.cancel()
    if pending:
        _, stuck = await asyncio.wait(pending, timeout=LEFTOVER_SECONDS)
        if stuck:
            out = io.StringIO()
            for task in stuck:
                task.print_stack(limit=15, file=out)
            warnings.warn(f"left running after the page, not stopped when cancelled:\n"
                          f"{out.getvalue()}", stacklevel=1)
