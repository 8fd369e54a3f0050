"""The LangGraph Server API through LangGraph's JS SDK (@langchain/langgraph-sdk, pinned in
package.json), run by node: sdk_check.mjs drives the API and prints what it saw as JSON,
and each test here asserts one part of that report.

The API host is support.shared_host (conftest's graphs, plus the `errand` graph of
support.py whose run takes seconds, so that background runs can be cancelled or refused
while running), kept up for the session, shared with test_browser.py. npm
packages install once into a cache outside the repo (support.py). Without node the tests
fail (CI installs it).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.server.js import support

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
QUESTION = {"question": "Approve this purchase?", "item": "GPU rental, 8 hours",
            "amount": 96.0}
CHARGED = {**PURCHASE, "status": "charged"}
ERROR = {"error": "ValueError", "message": "card declined"}
# LangGraph's server names a graph's default assistant uuid5(NAMESPACE_GRAPH, graph id).
PURCHASE_ASSISTANT = str(uuid.uuid5(uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"),
                                    "purchase"))

pytestmark = pytest.mark.timeout(600)  # the first npm install may take minutes


@pytest.fixture(scope="session")
def js_api(dev_server: Any) -> Iterator[str]:
    yield support.shared_host(dev_server.address).url
    support.close_shared()


@pytest.fixture(scope="module")
def report(js_api: str) -> dict[str, Any]:
    node = support.node()
    modules = support.node_modules()
    started = time.monotonic()
    done = subprocess.run(
        [node, str(support.JS_DIR / "sdk_check.mjs"), js_api], capture_output=True, text=True,
        timeout=180, env={**os.environ, "GRAPHRUN_JS_MODULES": str(modules)})
    assert done.returncode == 0, f"sdk_check.mjs failed:\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(done.stdout)
    out["node_seconds"] = time.monotonic() - started
    return out


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    """One check's observations; a check that threw fails with what it threw."""
    found: dict[str, Any] = report["checks"][name]
    assert "error" not in found, f"{name}: the SDK call threw {found['error']}"
    return found


def interrupt_of(value: Any) -> list[dict[str, Any]]:
    """An `__interrupt__` list with the purchase question (ids vary; checked to be ids)."""
    assert isinstance(value, list) and len(value) == 1, value
    assert isinstance(value[0]["id"], str) and value[0]["id"], value
    assert value[0]["value"] == QUESTION
    return value


def test_sdk_version_pinned(report: dict[str, Any]) -> None:
    pinned = json.loads((support.JS_DIR / "package.json").read_text())["dependencies"]
    assert report["sdk_version"] == pinned["@langchain/langgraph-sdk"]


def test_interrupt_found_by_status_and_resumed_by_value(report: dict[str, Any]) -> None:
    c = check(report, "interrupt_and_resume")
    assert c["created_status"] == "idle"
    # runs.wait's onRunCreated: the run and thread ids from Content-Location.
    assert c["run_created"]["thread_id"] == c["thread_id"]
    assert uuid.UUID(c["run_created"]["run_id"])
    paused = c["paused"]
    [question] = interrupt_of(paused.pop("__interrupt__"))
    assert paused == PURCHASE

    found = c["found"]
    assert found is not None, "threads.search({status: 'interrupted'}) missed the thread"
    assert found["status"] == "interrupted"
    assert found["metadata"]["graph_id"] == "purchase"
    assert found["values"] == PURCHASE
    [(_task_id, questions)] = found["interrupts"].items()  # keyed by task id
    assert questions == [question]
    assert c["count"] >= 1

    assert c["state"]["next"] == ["request_approval"]
    assert c["state"]["values"] == PURCHASE
    assert c["state"]["interrupts"] == [question]
    assert c["state"]["task_interrupts"] == [[question]]

    assert c["resumed"] == CHARGED  # command: {resume: true}
    assert c["after"] == {"status": "idle", "values": CHARGED, "interrupts": {}}
    assert c["history"] == ["charged", "approved", "pending"]
    assert c["still_listed"] is False


def test_stream_values_updates_custom(report: dict[str, Any]) -> None:
    c = check(report, "stream_modes")
    for events in (c["first"], c["resumed"]):
        assert events[0][0] == "metadata" and uuid.UUID(events[0][1]["run_id"])
        names = {name for name, _ in events[1:]}
        # The purchase graph writes no custom chunk: "custom" is accepted, and silent.
        assert names == {"values", "updates"}, names
    values = [data for name, data in c["first"] if name == "values"]
    updates = [data for name, data in c["first"] if name == "updates"]
    [question] = interrupt_of(updates[-1].pop("__interrupt__"))
    assert updates == [{}]
    assert values[0] == PURCHASE
    assert values[-1] == {**PURCHASE, "__interrupt__": [question]}  # as LangGraph streams
    assert [name for name, _ in c["first"]] == ["metadata", "values", "updates", "values"]

    assert [data for name, data in c["resumed"] if name == "updates"] == [
        {"request_approval": {"status": "approved"}}, {"charge_card": {"status": "charged"}}]
    assert [data["status"] for name, data in c["resumed"] if name == "values"] == [
        "pending", "approved", "charged"]
    assert c["final_values"] == CHARGED and c["final_next"] == []


def test_failing_node(report: dict[str, Any]) -> None:
    c = check(report, "failing_node")
    # runs.wait raises LangGraph's __error__ as an Error (raiseError defaults to true).
    assert c["thrown"] is not None and c["thrown"]["message"] == "ValueError: card declined"
    assert c["answered"] == {"__error__": ERROR}  # raiseError: false
    assert c["thread_status"] == "error"
    assert c["streamed"][0][0] == "metadata"
    assert c["streamed"][-1] == ["error", ERROR]
    assert [name for name, _ in c["streamed"]].count("error") == 1


def test_update_state(report: dict[str, Any]) -> None:
    """As LangGraph does it (checked against LangGraph's own StateGraph): an update of a
    paused thread keeps it paused; one as the paused node moves it past the node."""
    c = check(report, "update_state")
    for key in ("updated_checkpoint", "as_node_checkpoint"):
        assert c[key] and c[key]["checkpoint_id"], c[key]
    assert c["updated_checkpoint"]["checkpoint_id"] != c["as_node_checkpoint"]["checkpoint_id"]
    assert c["after_update"] == {"values": {**PURCHASE, "amount": 50.0},
                                 "next": ["request_approval"]}
    assert c["after_as_node"] == {"values": {**PURCHASE, "amount": 50.0,
                                             "status": "approved"}, "next": ["charge_card"]}
    assert c["done"] == {**CHARGED, "amount": 50.0}


def test_stateless_runs(report: dict[str, Any]) -> None:
    c = check(report, "stateless")
    waited = c["waited"]
    interrupt_of(waited.pop("__interrupt__"))
    assert waited == PURCHASE
    assert c["streamed"][0][0] == "metadata"
    [(name, data)] = c["streamed"][1:]
    assert name == "updates"
    interrupt_of(data["__interrupt__"])


def test_agent_approval(report: dict[str, Any]) -> None:
    c = check(report, "agent_approval")
    assert c["request"]["action_requests"][0]["name"] == "pay_invoice"
    assert c["last"]["type"] == "ai"
    assert c["last"]["content"].endswith("Paid INV-7: 1200.00 EUR")


def test_v3_thread_commands(report: dict[str, Any]) -> None:
    """ThreadStream's agent.getTree, state.get, state.listCheckpoints and state.fork."""
    c = check(report, "v3_thread_commands")
    assert c["tree"] == {"tree": {"namespace": [], "status": "interrupted",
                                  "graph_name": "purchase"}}
    assert c["state"]["values"] == {"status": "pending"}
    listed = c["listed"]["checkpoints"]
    assert [(x["step"], x["metadata"]["source"]) for x in listed] == [(0, "loop"),
                                                                       (-1, "input")]
    assert c["state"]["checkpoint"]["id"] == listed[0]["id"]
    assert listed[0]["node_name"] == "__start__" and "node_name" not in listed[1]
    assert [x["id"] for x in c["older"]["checkpoints"]] == [listed[1]["id"]]
    assert c["forked_thread"] and c["forked_run"] == "string"
    assert "input.respond" in c["refused"]["message"]  # waits at its question
    assert "no checkpoint 'nope'" in c["missing"]["message"]


def test_v3_input_inject(report: dict[str, Any]) -> None:
    c = check(report, "v3_input_inject")
    assert c["status"] == "interrupted"  # the agent asks before paying
    assert c["messages"][:3] == [["human", "Hello"], ["ai", "Which invoice should I pay?"],
                                 ["human", "Pay INV-7 from ACME, 1200 EUR"]]


# --- Background runs: expected to fail until they land (strict). ---


def _create_join(c: dict[str, Any]) -> None:
    # LangGraph answers "pending"; a purchase run may be done by the time it answers.
    assert c["run"]["status"] in ("pending", "running", "success"), c["run"]
    assert c["run"]["assistant_id"] == PURCHASE_ASSISTANT
    interrupt_of(c["joined"]["__interrupt__"])  # join answers the run's values
    assert c["got_status"] in ("success", "interrupted")
    assert c["listed"] == [c["run"]["run_id"]]


def _join_stream(c: dict[str, Any]) -> None:
    names = [name for name, _ in c["events"]]
    assert set(names) <= {"metadata", "values", "updates"}, names  # the modes asked for
    assert [data for name, data in c["events"] if name == "updates"] == [
        {"request_approval": {"status": "approved"}}, {"charge_card": {"status": "charged"}}]
    assert [data for name, data in c["events"] if name == "values"][-1] == CHARGED
    assert c["final_values"] == CHARGED


def _cancel(c: dict[str, Any]) -> None:
    assert c["created_status"] in ("pending", "running"), c  # answered before it ends
    assert c["refused"] is None, c["refused"]
    assert c["run_status"] == "interrupted"  # LangGraph's status of a cancelled run
    assert c["thread_status"] != "busy"
    assert c["values"] is None or not str(c["values"].get("item", "")).endswith("(done)")


def _reject(c: dict[str, Any]) -> None:
    assert c["first_status"] in ("pending", "running"), c  # answered before it ends
    assert c["second"] is not None, "the second run was accepted on a busy thread"
    assert c["second"]["status"] == 409, c["second"]


BACKGROUND = {
    "background_create_join": _create_join,
    "background_join_stream": _join_stream,
    "background_cancel": _cancel,
    "multitask_reject": _reject,
}


@pytest.mark.parametrize("name", list(BACKGROUND))
def test_background_runs(report: dict[str, Any], name: str) -> None:
    BACKGROUND[name](check(report, name))


def test_report_timing(report: dict[str, Any]) -> None:
    """The whole script stays quick (each check is bounded by its own timeout, 20 s)."""
    assert report["node_seconds"] < 60, report["seconds"]
