"""`graphrun resume` answers through the `invoke` update; `threads` lists each thread once;
a too-large input or answer is refused in one line before anything is sent.

Real subprocesses against the session dev server, with a worker serving
tests.cli.answer_graph (a question with a response_schema, then another) and the
purchase example.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import Background, CLIWorker

pytestmark = pytest.mark.temporal

ORDER = json.dumps({"item": "GPU rental", "amount": 96.0, "status": "pending"})
WRONG_ID = "0123456789abcdef0123456789abcdef"
LIMIT_RE = re.compile(r"is [\d,]+ bytes as JSON; the limit is 1,000,000\. Send a reference")


@pytest.fixture(scope="module")
def worker(dev_server) -> Iterator[CLIWorker]:
    tq = f"cli-answers-{uuid.uuid4()}"
    bg = Background.start("worker", "--graph", "tests.cli.answer_graph:graph",
                          "--graph", "examples.purchase:graph",
                          "--address", dev_server.address, "--task-queue", tq)
    try:
        bg.wait_for("ready")
        yield CLIWorker(dev_server.address, tq, bg)
        code, _ = bg.interrupt()
        assert code == 0, bg.lines
    finally:
        bg.kill()


def _tid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def _json(r) -> dict:
    assert r.code == 0, r
    return json.loads(r.out)


def _one_line_error(r, code: int = 1) -> str:
    assert r.code == code, r
    assert r.out == "", r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.err
    return lines[0]


def _asked(w: CLIWorker) -> tuple[str, str]:
    """An `answer` thread paused at its first question: (thread, interrupt id)."""
    thread = _tid("ans")
    data = _json(w.run("invoke", "answer", "--thread", thread, "--json",
                       "--input", json.dumps({"item": "GPU"})))
    assert data["status"] == "interrupted"
    return thread, data["interrupts"][0]["id"]


@pytest.mark.slow
def test_a_refused_answer_is_one_line_and_changes_nothing(worker: CLIWorker) -> None:
    w = worker
    thread, iid = _asked(w)
    before = _json(w.run("state", thread, "--json"))

    # The response_schema refuses it: pydantic's error has several lines; we print one.
    r = w.run("resume", thread, json.dumps({"approved": "maybe"}))
    line = _one_line_error(r)
    assert line.startswith("error: ResumeValidationError: the answer to node 'approve' does "
                           "not match its response_schema")
    r = w.run("resume", thread, json.dumps({"approved": "maybe"}), "--id", iid)
    assert "response_schema" in _one_line_error(r)

    # A stale id: the validator refuses it before it enters history.
    r = w.run("resume", thread, "true", "--id", WRONG_ID)
    line = _one_line_error(r)
    assert line.startswith("error: InvalidResumeError: ") and WRONG_ID in line and iid in line

    # invoke --resume answers the same way, and says so in one line too.
    r = w.run("invoke", "answer", "--thread", thread, "--resume", '{"approved": 3}')
    assert "response_schema" in _one_line_error(r)

    after = _json(w.run("state", thread, "--json"))
    assert after["status"] == "interrupted"
    assert after["config"] == before["config"]  # no new checkpoint
    assert [i["id"] for i in after["interrupts"]] == [iid]
    assert after["refused"] == []  # an update is refused to the caller, not recorded


def test_an_accepted_answer_prints_the_next_pause_then_the_final_state(
        worker: CLIWorker) -> None:
    w = worker
    thread, iid = _asked(w)

    r = w.run("resume", thread, json.dumps({"approved": True}), "--id", iid)
    assert r.code == 0, r
    lines = r.out.splitlines()
    assert lines[0] == f"thread {thread} (answer): interrupted"
    assert '  status: "approved"' in lines
    assert "next: note" in lines
    second = re.findall(r"\[([0-9a-f]{32})\] (.*)", r.out)
    assert len(second) == 1 and second[0][0] != iid
    assert json.loads(second[0][1]) == {"question": "Any note?"}
    assert f"answer with: graphrun resume {thread} '<json>' --id {second[0][0]}" in lines

    data = _json(w.run("resume", thread, "ship it", "--json"))  # a bare word is a string
    assert data == {"thread_id": thread, "graph": "answer", "status": "done",
                    "values": {"item": "GPU", "status": "approved", "note": "ship it"},
                    "next": [], "interrupts": []}

    r = w.run("resume", thread, "true")
    line = _one_line_error(r)
    assert "has finished: nothing to resume" in line


def test_no_check_sends_the_signal_and_a_refusal_is_recorded(worker: CLIWorker) -> None:
    w = worker
    thread, iid = _asked(w)
    r = w.run("resume", thread, "true", "--id", WRONG_ID, "--no-check")
    assert r.code == 0, r
    assert r.out.startswith(f"sent thread {thread} the answer to interrupt {WRONG_ID} true")
    deadline = time.monotonic() + 15
    while not (state := _json(w.run("state", thread, "--json")))["refused"]:
        assert time.monotonic() < deadline, state
        time.sleep(0.2)
    assert WRONG_ID in state["refused"][-1]
    assert [i["id"] for i in state["interrupts"]] == [iid]
    assert "last refused resume" in w.run("state", thread).out


def _rows(w: CLIWorker, *args: str) -> list[dict]:
    return _json(w.run("threads", "--graph", "purchase", "--json", *args))


@pytest.mark.slow
def test_threads_lists_a_thread_once_by_its_latest_run(worker: CLIWorker) -> None:
    w = worker
    thread = _tid("again")
    assert _json(w.run("invoke", "purchase", "--thread", thread, "--input", ORDER,
                       "--json"))["status"] == "interrupted"
    assert _json(w.run("resume", thread, "true", "--json"))["status"] == "done"
    # Invoked again after it finished: a second workflow run under the same id.
    assert _json(w.run("invoke", "purchase", "--thread", thread, "--input", ORDER,
                       "--json"))["status"] == "interrupted"

    deadline = time.monotonic() + 15
    while True:  # visibility is eventually consistent
        mine = [r for r in _rows(w) if r["thread_id"] == thread]
        if [r["status"] for r in mine] == ["interrupted"]:
            break
        assert time.monotonic() < deadline, mine
        time.sleep(0.3)
    assert mine == [{"thread_id": thread, "graph": "purchase", "status": "interrupted",
                     "workflow_status": "RUNNING"}]
    # Its first run is still "done" in visibility, but the thread is not done.
    assert thread not in [r["thread_id"] for r in _rows(w, "--status", "done")]
    assert [r["thread_id"] for r in _rows(w, "--status", "interrupted")].count(thread) == 1
    r = w.run("threads", "--graph", "purchase")
    assert [line.split()[0] for line in r.out.splitlines()].count(thread) == 1


def _big(tmp_path: Path, value: object) -> str:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(value))
    assert path.stat().st_size > 5_000_000
    return f"@{path}"


@pytest.mark.slow
def test_a_5mb_input_or_answer_is_refused_in_one_line_before_it_is_sent(
        worker: CLIWorker, tmp_path: Path) -> None:
    w = worker
    big = _big(tmp_path, {"item": "x" * 5_000_000, "amount": 1.0, "status": "pending"})
    thread = _tid("big")
    line = _one_line_error(w.run("invoke", "purchase", "--thread", thread, "--input", big))
    assert line.startswith("error: InputLimitError: the input is ") and LIMIT_RE.search(line)
    assert "not found" in _one_line_error(w.run("state", thread))  # nothing was started

    thread, iid = _asked(w)
    before = _json(w.run("state", thread, "--json"))
    big = _big(tmp_path, {"approved": True, "why": "x" * 5_000_000})
    for args in (["resume", thread, big], ["resume", thread, big, "--id", iid],
                 ["resume", thread, big, "--no-check"]):
        line = _one_line_error(w.run(*args))
        assert line.startswith("error: InputLimitError: the resume value is "), args
        assert LIMIT_RE.search(line), line
    line = _one_line_error(w.run("invoke", "answer", "--thread", thread, "--resume", big))
    assert line.startswith("error: InputLimitError: ") and LIMIT_RE.search(line)
    after = _json(w.run("state", thread, "--json"))
    assert after == before
