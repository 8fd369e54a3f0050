"""A task across the activity boundary: TaskCall -> NodeCall -> TaskCall and TaskResult ->
NodeResult -> TaskResult (graphrun.payloads), each written once and lossless."""

from __future__ import annotations

import dataclasses
from typing import Any

from graphrun import payloads, serde
from graphrun.channels import MISSING
from graphrun.checkpoint import Task, TaskCall, TaskResult
from graphrun.declared import NO_TYPES
from graphrun.types import PUSH, Interrupt

TASK = Task(id="t1", name="n", path=("__pregel_pull", "n"), triggers=("a",),
            input={"x": 1}, ns="n:t1", step=3)


def _loads(data: Any, decode: Any = serde.loads) -> Any:
    return decode(data, NO_TYPES)


def _across(call: TaskCall, counts_steps: bool = True) -> TaskCall:
    wire = payloads.node_call(call, serde.task_to_wire(TASK, TASK.triggers),
                              counts_steps=counts_steps, graph="g", node="n", thread_id="th")
    sent = payloads.NodeCall.model_validate_json(wire.model_dump_json())  # as Temporal does
    task = serde.task_from_wire(sent.task, "n", TASK.triggers)
    return payloads.task_call(sent, task, NO_TYPES, attempt=call.attempt,
                              first_attempt_time=call.first_attempt_time)


def test_every_field_of_a_task_call_crosses() -> None:
    call = TaskCall(task=TASK, resume=["yes", {"k": 2}], null_resume={"n": 1},
                    nested={"sub": [1]}, context={"user": "u"}, messages=True,
                    messages_v2=True, debug=True, checkpoints=True, checkpoint_id="c9",
                    parents={"": "c1"}, attempt=2,
                    first_attempt_time=12.5, calls={}, target=["a", "b"],
                    remaining_steps=7, subgraph_checkpoints={"sub:1": "c3"},
                    durability=None)
    assert _across(call) == call
    # No null resume stays none; a graph that never counts steps sends no count.
    plain = dataclasses.replace(call, null_resume=MISSING, remaining_steps=25)
    assert _across(plain, counts_steps=False) == plain


def test_every_field_of_a_task_result_crosses() -> None:
    awaited = Task(id="c1", name="call", path=(PUSH, "call"), triggers=(PUSH,), input=[1],
                   ns="call:c1", step=3)
    result = TaskResult(task_id="t1", writes=[("x", 2), ("log", ["a"])], update={"x": 2},
                        interrupts=[Interrupt(value={"q": 1}, id="i1")], resume=["r"],
                        nested={"k": 1}, invalid_resume="bad", custom=[{"c": 1}],
                        paused=True, sub_events=[(("s:1",), "values", {"y": 1})],
                        awaiting=[awaited], took_null_resume=True, cached=True)
    wire = payloads.node_result(result, NO_TYPES, stream=True)
    back = payloads.task_result(payloads.NodeResult.model_validate_json(
        wire.model_dump_json()), "t1", _loads)
    # All but what the node returned: the workflow reads its writes, no more (history
    # holds the update once, as writes).
    assert back == dataclasses.replace(result, update=None)
    # Subgraphs' chunks go back only to a caller that streams.
    assert payloads.node_result(result, NO_TYPES, stream=False).sub_events == []
