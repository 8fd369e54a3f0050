"""The `graphrun` command, run as a real subprocess against the session dev server.

A `graphrun worker --graph examples.purchase:graph` subprocess serves the graph
(fixture `cli_worker`); every other command is a fresh `python -m graphrun.cli`.
"""

from __future__ import annotations

import json
import re
import uuid

import pytest

from tests.cli.helpers import CLIWorker, free_port, run_cli

pytestmark = pytest.mark.temporal

ORDER = json.dumps({"item": "GPU rental", "amount": 96.0, "status": "pending"})
WRONG_ID = "0123456789abcdef0123456789abcdef"
ID_RE = re.compile(r"\[([0-9a-f]{32})\]")


def _thread() -> str:
    return f"order-{uuid.uuid4().hex[:12]}"


def _paused(w: CLIWorker) -> tuple[str, str]:
    """A purchase thread paused at its approval question: (thread id, interrupt id)."""
    thread = _thread()
    r = w.run("invoke", "purchase", "--thread", thread, "--input", ORDER, "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["status"] == "interrupted"
    return thread, data["interrupts"][0]["id"]


def _state(w: CLIWorker, thread: str) -> dict:
    r = w.run("state", thread, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.slow
def test_invoke_state_threads_history_resume(cli_worker: CLIWorker) -> None:
    w, thread = cli_worker, _thread()

    r = w.run("invoke", "purchase", "--thread", thread, "--input", ORDER)
    assert r.code == 0, r.err
    assert "interrupted" in r.out
    assert "Approve this purchase?" in r.out
    ids = ID_RE.findall(r.out)
    assert len(ids) == 1
    iid = ids[0]
    assert f"graphrun resume {thread}" in r.out

    r = w.run("state", thread)
    assert r.code == 0, r.err
    assert "status: interrupted" in r.out
    assert "next: request_approval" in r.out
    assert f"[{iid}]" in r.out and "Approve this purchase?" in r.out

    r = w.run("threads", "--status", "interrupted", "--graph", "purchase")
    assert r.code == 0, r.err
    assert r.out.splitlines()[0].split() == ["THREAD", "GRAPH", "STATUS", "WORKFLOW"]
    row = next(line for line in r.out.splitlines() if line.startswith(thread))
    assert row.split() == [thread, "purchase", "interrupted", "RUNNING"]

    r = w.run("history", thread)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert len(lines) >= 2
    assert "next=request_approval" in lines[0] and re.search(r"[0-9a-f]{32}$", lines[0])
    assert "input" in lines[-1]
    assert len(w.run("history", thread, "--limit", "1").out.splitlines()) == 1

    # The answer goes through the invoke update: we see the run it started, to its end.
    r = w.run("resume", thread, "true", "--id", iid)
    assert r.code == 0, r.err
    assert r.out.splitlines()[0] == f"thread {thread} (purchase): done"
    assert '  status: "charged"' in r.out.splitlines()

    state = _state(w, thread)
    assert state["status"] == "done"
    assert state["values"]["status"] == "charged"
    assert state["next"] == [] and state["interrupts"] == []

    r = w.run("threads", "--graph", "purchase", "--json")
    assert r.code == 0, r.err
    rows = {t["thread_id"]: t for t in json.loads(r.out)}
    assert rows[thread]["status"] == "done"
    assert rows[thread]["workflow_status"] == "RUNNING"  # a thread lives until deleted

    # Nothing left to answer: a finished thread is an error.
    r = w.run("resume", thread, "true")
    assert r.code == 1
    assert r.err.startswith("error: ") and "finished" in r.err


def test_invoke_json_and_resume_by_id_map(cli_worker: CLIWorker) -> None:
    w = cli_worker
    thread, iid = _paused(w)
    r = w.run("invoke", "purchase", "--thread", thread, "--json",
              "--resume", json.dumps({iid: True}))
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["status"] == "done"
    assert data["interrupts"] == []
    assert data["values"]["status"] == "charged"
    # The thread ran to its end: a resume now is refused (strict resume).
    r = w.run("invoke", "purchase", "--thread", thread, "--resume", "true")
    assert r.code == 1
    assert r.err.startswith("error: InvalidResumeError") and "nothing to resume" in r.err


def test_wrong_interrupt_id(cli_worker: CLIWorker) -> None:
    w = cli_worker
    thread, iid = _paused(w)

    r = w.run("invoke", "purchase", "--thread", thread, "--resume",
              json.dumps({WRONG_ID: True}))
    assert r.code == 1
    assert r.err.startswith("error: InvalidResumeError") and WRONG_ID in r.err

    r = w.run("resume", thread, "true", "--id", WRONG_ID)
    assert r.code == 1
    assert r.err.startswith("error: InvalidResumeError") and WRONG_ID in r.err
    assert r.out == ""

    r = w.run("resume", thread, "true", "--id", "not-an-id")
    assert r.code == 2 and "--id" in r.err

    state = _state(w, thread)
    assert state["status"] == "interrupted"
    assert [i["id"] for i in state["interrupts"]] == [iid]
    # Refused updates are the caller's error, not recorded (refused signals are:
    # see test_cli_answers.py).
    assert state["refused"] == []


def test_bad_json_is_a_usage_error(cli_worker: CLIWorker) -> None:
    w = cli_worker
    r = w.run("invoke", "purchase", "--thread", _thread(), "--input", "{bad")
    assert r.code == 2
    assert r.err.startswith("error: --input is not valid JSON")
    r = w.run("invoke", "purchase", "--thread", _thread(), "--input", "@/nonexistent.json")
    assert r.code == 2 and "--input" in r.err
    r = w.run("resume", _thread(), "[1, 2")
    assert r.code == 2
    assert r.err.startswith("error: VALUE is not valid JSON")
    r = w.run("state")
    assert r.code == 2 and "error:" in r.err


def test_unknown_thread(cli_worker: CLIWorker) -> None:
    w, thread = cli_worker, f"missing-{uuid.uuid4().hex[:8]}"
    for args in (["state", thread], ["history", thread], ["resume", thread, "true"]):
        r = w.run(*args)
        assert r.code == 1, (args, r)
        assert r.err.startswith("error: ") and "not found" in r.err and thread in r.err
        assert len(r.err.strip().splitlines()) == 1


def test_no_server() -> None:
    address = f"127.0.0.1:{free_port()}"
    for args in (["state", "t"], ["threads"],
                 ["invoke", "purchase", "--thread", "t", "--input", "{}"]):
        r = run_cli(*args, env={"TEMPORAL_ADDRESS": address})
        assert r.code == 1, (args, r)
        assert r.err.startswith(f"error: cannot reach a Temporal server at {address}")
        assert "graphrun dev" in r.err and "TEMPORAL_ADDRESS" in r.err
        assert len(r.err.strip().splitlines()) == 1


def test_worker_unknown_graph(dev_server) -> None:
    for spec, msg in [("examples.nope:graph", "cannot import module"),
                      ("examples.purchase:nope", "has no attribute"),
                      ("examples.purchase", "MODULE:ATTR")]:
        r = run_cli("worker", "--graph", spec, "--address", dev_server.address)
        assert r.code != 0 and r.err.startswith("error: ") and msg in r.err, (spec, r)


def test_invoke_stream_prints_chunks_as_they_come(cli_worker: CLIWorker) -> None:
    w, thread = cli_worker, _thread()
    r = w.run("invoke", "purchase", "--thread", thread, "--input", ORDER,
              "--stream", "updates,values")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    streamed = [line for line in lines if line.startswith("[")]
    assert streamed[0] == ('[values] {"item": "GPU rental", "amount": 96.0, '
                           '"status": "pending"}')
    assert any(line.startswith('[updates] {"__interrupt__": [') and
               "Approve this purchase?" in line for line in streamed)
    assert streamed[-1].startswith("[values]") and "__interrupt__" in streamed[-1]
    assert "interrupted" in lines[len(streamed)]  # then the run's result, as invoke prints

    r = w.run("invoke", "purchase", "--thread", thread, "--resume", "true",
              "--stream", "--json")
    assert r.code == 0, r.err
    chunks = [json.loads(line) for line in r.out.splitlines()[:2]]
    assert chunks == [{"mode": "updates", "chunk": {"request_approval": {"status": "approved"}}},
                      {"mode": "updates", "chunk": {"charge_card": {"status": "charged"}}}]
