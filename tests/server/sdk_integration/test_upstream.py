"""LangGraph SDK's own integration tests (langgraph-sdk's sdist, tests/integration) against
graphrun's API: every test upstream runs, checked against EXPECTED_FAILURES.

EXPECTED_FAILURES is strict, like a strict xfail: a test in it that passes fails this
test, as does a failure not in it, so the table always says what graphrun lacks.
When a feature lands, run

    .venv/bin/python -m pytest tests/server/sdk_integration -q

and remove the entries it reports as passing.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from tests.server.sdk_integration.conftest import (
    PINNED_SDK,
    SUMMARY,
    Served,
    Upstream,
    run_upstream,
)

# The v3 streaming client: `client.threads.stream(...)` and RemoteGraph
# `astream_events(version="v3")`. Every other test calls the classic API (assistants,
# threads, runs, crons, store) through RunsClient, ThreadsClient, AssistantsClient,
# CronClient and StoreClient.
V3_MODULES = ("test_cancel.py", "test_concurrent.py", "test_extensions.py",
              "test_helpers.py", "test_lifecycle.py", "test_messages.py",
              "test_reconnect.py", "test_remote_graph_v3.py", "test_subgraphs.py",
              "test_tools.py", "test_update_state.py", "test_values.py",
              "test_websocket.py")
V3_TESTS = ("test_threads_crud.py::test_threads_history_after_run_async",
            "test_threads_crud.py::test_threads_history_after_run_sync")

def is_v3(test_id: str) -> bool:
    return test_id.split("::")[0] in V3_MODULES or test_id in V3_TESTS


# -- why the tests in EXPECTED_FAILURES fail, by cause (none left) -------------------------
EXPECTED_FAILURES: dict[str, str] = {}


def _outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """Test id (`module.py::name`) -> (passed | failed | error | skipped, message)."""
    out: dict[str, tuple[str, str]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        test_id = f"{module}.py::{case.get('name')}" if module else str(case.get("name"))
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = _why(child.get("message") or "", child.text or "")
                if child.tag != "skipped":
                    break  # a call failure and a teardown error: the failure tells why
        out[test_id] = (outcome, message)
    return out


def _why(message: str, text: str) -> str:
    """The exception a test failed with, and the first one raised when that is another
    (upstream's `finally: threads.delete(...)` can fail too, hiding the cause)."""
    block: list[str] = []  # the first `E   ...` line and its continuation lines
    for line in text.splitlines():
        if line.startswith("E "):
            block.append(line[1:].strip())
        elif block and line.startswith(" ") and line.strip():
            block.append(line.strip())  # the rest of its message (an HTTP error's body)
        elif block:
            break
    first = " ".join(block)
    message = " ".join(message.split()) or first
    return message if not first or first in message else f"{first} (then: {message})"


def _short(message: str, limit: int = 400) -> str:
    line = " ".join(message.split())
    return line if len(line) <= limit else line[:limit] + "..."


@pytest.mark.slow
@pytest.mark.timeout(240)  # run_upstream gives up first, with a clearer message
def test_langgraph_sdk_integration_suite(upstream: Upstream, sdk_api: Served,
                                         tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    proc = run_upstream(upstream, sdk_api.url, junit)
    ran = f"{proc.args}\nexit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    assert junit.exists(), f"the upstream suite wrote no report:\n{ran}"
    outcomes = _outcomes(junit)
    assert outcomes, f"the upstream suite ran no test:\n{ran}"

    passed = sorted(t for t, (o, _) in outcomes.items() if o == "passed")
    failed = sorted(t for t in outcomes if t not in passed)
    classic = [t for t in outcomes if not is_v3(t)]
    causes = Counter(EXPECTED_FAILURES[t] for t in failed if t in EXPECTED_FAILURES)
    SUMMARY[:] = [
        f"{len(outcomes)} upstream tests: {len(passed)} passed, {len(failed)} failed "
        f"(classic API: {sum(t in passed for t in classic)} of {len(classic)} passed; "
        f"v3 streaming client: {sum(t in passed for t in outcomes if is_v3(t))} of "
        f"{len(outcomes) - len(classic)} passed)",
        f"graphs served: {sdk_api.graphs}; not served: {sdk_api.unserved}",
        *(f"  {n} x {cause}" for cause, n in causes.most_common()),
    ]

    unexpected = [f"{t}: {outcomes[t][0]}: {_short(outcomes[t][1])}"
                  for t in failed if t not in EXPECTED_FAILURES]
    now_passing = [t for t in passed if t in EXPECTED_FAILURES]
    stale = sorted(set(EXPECTED_FAILURES) - set(outcomes))
    problems = []
    if unexpected:
        problems.append("failed, and not in EXPECTED_FAILURES:\n  " + "\n  ".join(unexpected))
    if now_passing:
        problems.append("passed, but EXPECTED_FAILURES says they fail (remove them):\n  "
                        + "\n  ".join(now_passing))
    if stale:
        problems.append(f"in EXPECTED_FAILURES but not in langgraph-sdk {PINNED_SDK}'s "
                        f"suite:\n  " + "\n  ".join(stale))
    assert not problems, "\n".join([*problems, *SUMMARY])
