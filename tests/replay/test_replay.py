"""Replay the saved histories against today's GraphWorkflow (no server needed).

A failure here means a workflow code change is not replay-safe for threads
already running: guard it with workflow.patched() instead of re-recording.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHistory
from temporalio.workflow import NondeterminismError

from graphrun.client import data_converter
from graphrun.worker import create_replayer
from tests.replay.graphs import GRAPHS

HISTORIES = Path(__file__).parent / "histories"
BAD = "bad_approval.json"
STORED = "approval_stored.json"  # recorded on a worker with external payload storage
GOOD = sorted(p.name for p in HISTORIES.glob("*.json") if p.name not in (BAD, STORED))


def _load(name: str) -> WorkflowHistory:
    text = (HISTORIES / name).read_text()
    started = json.loads(text)["events"][0]["workflowExecutionStartedEventAttributes"]
    return WorkflowHistory.from_json(started.get("workflowId", name.removesuffix(".json")),
                                     text)


def test_expected_histories_present() -> None:
    assert set(GOOD) == {"approval.json", "parallel.json", "flaky.json",
                         "looping_first_run.json", "looping_last_run.json",
                         "approval_signals.json", "deadline.json", "routed_update.json",
                         "refused_attack.json", "empty_start.json", "copy_fork.json",
                         "approval_compact.json", "approval_status.json",
                         "functional.json", "bulk_update.json", "streamed.json",
                         "agent.json", "runs.json", "thread_record.json",
                         "assistant_record.json", "cron_run.json", "resolved.json",
                         "relayed.json", "max_concurrency.json", "subgraph_fork.json",
                         "step_timeout.json", "cancel_kept.json", "thread_lives.json",
                         "record_adopted.json", "adopted_thread.json",
                         "stateless_webhook.json", "lives_declared.json",
                         "record_lives_declared.json", "version_moved.json",
                         "told.json", "told_flaky.json", "handled.json",
                         "handled_inline.json"}
    assert (HISTORIES / STORED).exists()
    assert (HISTORIES / BAD).exists()


@pytest.mark.parametrize("name", GOOD)
async def test_replay_succeeds(name: str) -> None:
    history = _load(name)
    result = await create_replayer(graphs=GRAPHS).replay_workflow(history)
    assert result.replay_failure is None


async def test_replay_with_external_storage(tmp_path: Path) -> None:
    # The worker lifted the payload size check, and said so with a marker per invocation:
    # a replayer with storage on matches it.
    replayer = create_replayer(graphs=GRAPHS,
                               data_converter=data_converter(external_storage=tmp_path))
    result = await replayer.replay_workflow(_load(STORED))
    assert result.replay_failure is None


async def test_record_adopted_continues_as_the_threads_graph_workflow() -> None:
    events = _load("record_adopted.json").events
    can = events[-1].workflow_execution_continued_as_new_event_attributes
    assert can.workflow_type.name == "GraphWorkflow"
    started = _load("adopted_thread.json").events[0]
    assert started.workflow_execution_started_event_attributes.workflow_type.name == \
        "GraphWorkflow"


async def test_a_thread_that_lives_stays_open() -> None:
    events = _load("thread_lives.json").events
    assert not any(e.HasField("workflow_execution_completed_event_attributes") for e in events)


def _markers(events: Any) -> list[str]:
    return [e.marker_recorded_event_attributes.marker_name for e in events
            if e.HasField("marker_recorded_event_attributes")]


async def test_threads_started_saying_they_live_need_no_patch_marker() -> None:
    """A start that says the thread lives (StartRequest.lives, RecordStart.lives) spares
    each new thread the patch's marker and its TemporalChangeVersion upsert; a history
    from a start that did not say so still decides by the marker (thread_lives.json)."""
    for name in ("lives_declared.json", "record_lives_declared.json"):
        events = _load(name).events
        assert _markers(events) == [], name
        assert not any(e.HasField("workflow_execution_completed_event_attributes")
                       for e in events), name
    assert _markers(_load("thread_lives.json").events) != []


async def test_looping_first_run_continued_as_new() -> None:
    events = _load("looping_first_run.json").events
    assert events[-1].HasField("workflow_execution_continued_as_new_event_attributes")


async def test_bad_history_is_minimal_edit_of_approval() -> None:
    good = json.loads((HISTORIES / "approval.json").read_text())["events"]
    bad = json.loads((HISTORIES / BAD).read_text())["events"]
    assert len(good) == len(bad)
    diff = [(g, b) for g, b in zip(good, bad, strict=True) if g != b]
    assert len(diff) == 1
    g, b = diff[0]
    assert g["activityTaskScheduledEventAttributes"]["activityType"]["name"] == "run_node"
    assert b["activityTaskScheduledEventAttributes"]["activityType"]["name"] == \
        "run_node_renamed"


async def test_bad_history_raises_nondeterminism() -> None:
    replayer = create_replayer(graphs=GRAPHS)
    with pytest.raises(NondeterminismError, match="run_node_renamed"):
        await replayer.replay_workflow(_load(BAD))
    # Without raising, the failure is reported on the result instead.
    result = await replayer.replay_workflow(_load(BAD), raise_on_replay_failure=False)
    assert isinstance(result.replay_failure, NondeterminismError)
