"""The superstep as tables: graph and checkpoint in, tasks and checkpoints out.

Runs drive `engine.Run` directly with a fake clock and the runner's `run_task`,
the way both drivers do; a few tests go through `invoke` to check what users see.
"""

from __future__ import annotations

import copy
import itertools
import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import pydantic
import pytest

from graphrun import (
    START,
    Command,
    GraphRecursionError,
    Interrupt,
    InvalidResumeError,
    InvalidUpdateError,
    MemorySaver,
    Send,
    StateGraph,
    interrupt,
)
from graphrun.engine import (
    Checkpoint,
    Run,
    RunOptions,
    TaskResult,
    Thread,
    apply_writes,
    checkpoint_id,
    is_interrupt_id,
    pending_interrupts,
    prepare_tasks,
    restore_channels,
    save_channels,
)
from graphrun.errors import EmptyInputError
from graphrun.runner import run_task
from graphrun.spec import GraphSpec
from graphrun.state import snapshot
from graphrun.types import PULL, PUSH

CONFIG = {"configurable": {"thread_id": "t"}}


class State(TypedDict):
    log: Annotated[list, operator.add]
    note: str


class FakeClock:
    """A deterministic clock: one second later at every call."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        return f"2024-01-01T00:00:{self.calls:02d}+00:00"


def drive(spec: GraphSpec, thread: Thread, input: Any, *, reverse: bool = False,
          task_log: list[str] | None = None, **kw: Any) -> Run:
    """What a driver does: plan, execute each task with run_task, hand back results."""
    run = Run(spec, thread, input, clock=FakeClock(), options=RunOptions(**kw))
    while tasks := run.next_tasks():
        results = [run_task(spec, run.call_for(t), resume_map=run.resume_map) for t in tasks]
        if task_log is not None:
            task_log.extend(t.id for t in tasks)
        run.finish_step(results[::-1] if reverse else results)
    return run


def logger(name: str, calls: dict[str, int] | None = None) -> Callable[[Any], dict[str, Any]]:
    def node(state: Any) -> dict[str, Any]:
        if calls is not None:
            calls[name] = calls.get(name, 0) + 1
        return {"log": [name]}

    node.__name__ = name
    return node


def chain(*names: str, **compile_kw: Any) -> GraphSpec:
    b = StateGraph(State)
    for n in names:
        b.add_node(n, logger(n))
    b.add_edge(START, names[0])
    for x, y in itertools.pairwise(names):
        b.add_edge(x, y)
    return b.compile(**compile_kw).spec


def diamond() -> GraphSpec:
    b = StateGraph(State)
    for n in "abc":
        b.add_node(n, logger(n))
    return (b.add_edge(START, "a").add_edge(START, "b").add_edge(["a", "b"], "c")
            .compile().spec)


def fan_out(n: int = 12) -> GraphSpec:
    def plan(state: Any) -> dict[str, Any]:
        return {"log": ["plan"]}

    def work(arg: dict[str, Any]) -> dict[str, Any]:
        return {"log": [f"work{arg['i']}"]}

    b = StateGraph(State).add_node(plan).add_node(work).add_node("other", logger("other"))
    b.add_edge(START, "plan").add_edge("plan", "other")
    b.add_conditional_edges("plan", lambda s: [Send("work", {"i": i}) for i in range(n)])
    return b.compile().spec


def fingerprint(thread: Thread) -> tuple[Any, ...]:
    """What a rejected call must leave untouched."""
    head = thread.head
    return (len(thread.checkpoints), thread.seq, head.id if head else None,
            copy.deepcopy(head.channel_values) if head else None,
            copy.deepcopy(head.channel_versions) if head else None,
            copy.deepcopy(head.pending) if head else None,
            list(head.null_writes) if head else None)


# -- checkpoints of a run ------------------------------------------------------------------
RUN_TABLE = [
    ("chain", lambda: chain("a", "b", "c"),
     [(-1, "input", (START,)), (0, "loop", ("a",)), (1, "loop", ("b",)),
      (2, "loop", ("c",)), (3, "loop", ())],
     ["a", "b", "c"]),
    ("diamond", diamond,
     [(-1, "input", (START,)), (0, "loop", ("a", "b")), (1, "loop", ("c",)),
      (2, "loop", ())],
     ["a", "b", "c"]),
    ("fan-out", lambda: fan_out(3),
     [(-1, "input", (START,)), (0, "loop", ("plan",)),
      (1, "loop", ("work", "work", "work", "other")), (2, "loop", ())],
     ["plan", "other", "work0", "work1", "work2"]),
]


@pytest.mark.parametrize("make, expected, log", [r[1:] for r in RUN_TABLE],
                         ids=[r[0] for r in RUN_TABLE])
def test_run_makes_one_checkpoint_per_superstep(make: Callable[[], GraphSpec],
                                                expected: list[tuple[int, str, tuple[str, ...]]],
                                                log: list[str]) -> None:
    spec = make()
    thread = Thread("t")
    run = drive(spec, thread, {"log": [], "note": "n"})
    assert run.status == "done"
    got = [(c.step, c.source, snapshot(spec, thread, c).next) for c in thread.checkpoints]
    assert got == expected
    assert run.output() == {"log": log, "note": "n"}
    ids = [c.id for c in thread.checkpoints]
    assert len(set(ids)) == len(ids)
    assert [c.parent_id for c in thread.checkpoints] == [None, *ids[:-1]]
    stamps = [c.created_at for c in thread.checkpoints]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    # the input checkpoint holds the input once, in __start__ (its task's result)
    assert thread.checkpoints[0].writes is None
    assert thread.checkpoints[0].channel_values[START] == {"log": [], "note": "n"}
    assert thread.checkpoints[0].channel_values[START] == {"log": [], "note": "n"}
    assert START not in thread.head.channel_values  # ephemeral input was consumed


def test_chain_checkpoint_metadata_writes() -> None:
    spec = chain("a", "b", "c")
    thread = Thread("t")
    drive(spec, thread, {"log": []})
    # by task id; each step has one task here
    assert [list(c.writes.values()) for c in thread.checkpoints[2:]] == [
        [{"log": ["a"]}], [{"log": ["b"]}], [{"log": ["c"]}]]
    assert [c.channel_values["log"] for c in thread.checkpoints] == [
        [], [], ["a"], ["a", "b"], ["a", "b", "c"]]


# -- deterministic ids -------------------------------------------------------------------
def test_checkpoint_ids_are_a_pure_function_of_thread_and_sequence() -> None:
    assert checkpoint_id("t", 0) == checkpoint_id("t", 0)
    assert checkpoint_id("t", 0) != checkpoint_id("t", 1)
    assert checkpoint_id("t", 0) != checkpoint_id("u", 0)
    assert is_interrupt_id(checkpoint_id("t", 0))


def test_same_inputs_give_same_ids_and_other_threads_other_ids() -> None:
    spec = diamond()
    runs = {}
    for key, tid in (("first", "t"), ("again", "t"), ("other", "u")):
        thread, tasks = Thread(tid), []
        drive(spec, thread, {"log": []}, task_log=tasks)
        runs[key] = ([c.id for c in thread.checkpoints], tasks,
                     [c.created_at for c in thread.checkpoints])
    assert runs["first"] == runs["again"]
    first_ids = set(runs["first"][0]) | set(runs["first"][1])
    other_ids = set(runs["other"][0]) | set(runs["other"][1])
    assert not first_ids & other_ids
    assert len(runs["first"][1]) == 4  # __start__, a, b, c


def asker(name: str = "ask", calls: dict[str, int] | None = None,
          **kw: Any) -> Callable[[Any], dict[str, Any]]:
    def node(state: Any) -> dict[str, Any]:
        if calls is not None:
            calls[name] = calls.get(name, 0) + 1
        answer = interrupt(f"{name}?", **kw)
        return {"log": [f"{name}:{answer}"]}

    node.__name__ = name
    return node


def test_interrupt_ids_are_deterministic_and_differ_across_threads() -> None:
    spec = StateGraph(State).add_node(asker()).add_edge(START, "ask").compile().spec
    ids = {}
    for key, tid in (("first", "t"), ("again", "t"), ("other", "u")):
        run = drive(spec, Thread(tid), {"log": []})
        assert run.status == "interrupted"
        (intr,) = run.interrupts
        assert intr.value == "ask?"
        ids[key] = intr.id
    assert ids["first"] == ids["again"]
    assert ids["first"] != ids["other"]
    assert is_interrupt_id(ids["first"])


# -- prepare_tasks and apply_writes ---------------------------------------------------------
def _checkpoint_at(spec: GraphSpec, step: int) -> Checkpoint:
    thread = Thread("t")
    drive(spec, thread, {"log": []})
    (ckpt,) = [c for c in thread.checkpoints if c.step == step]
    return ckpt


def test_prepare_tasks_puts_send_tasks_first_in_send_order() -> None:
    spec = fan_out(12)
    ckpt = _checkpoint_at(spec, 0)  # after START; plan is next
    tasks = prepare_tasks(spec, ckpt, restore_channels(spec, ckpt))
    assert [(t.name, t.path) for t in tasks] == [("plan", (PULL, "plan"))]
    ckpt = _checkpoint_at(spec, 1)  # after plan: 12 Sends and the static edge
    tasks = prepare_tasks(spec, ckpt, restore_channels(spec, ckpt))
    assert [t.path for t in tasks] == [(PUSH, i) for i in range(12)] + [(PULL, "other")]
    assert [t.input for t in tasks[:12]] == [{"i": i} for i in range(12)]
    assert tasks[-1].input == {"log": ["plan"]}
    assert {t.step for t in tasks} == {2}
    assert [t.triggers for t in tasks[:2]] == [(PUSH,), (PUSH,)]
    assert tasks[-1].triggers == ("branch:to:other",)
    assert all(t.ns == f"{t.name}:{t.id}" for t in tasks)
    assert len({t.id for t in tasks}) == 13
    # planning is pure: same checkpoint, same tasks
    assert prepare_tasks(spec, ckpt, restore_channels(spec, ckpt)) == tasks


def test_prepare_tasks_on_a_finished_checkpoint_is_empty() -> None:
    spec = chain("a")
    thread = Thread("t")
    drive(spec, thread, {"log": []})
    assert prepare_tasks(spec, thread.head, restore_channels(spec, thread.head)) == []


@pytest.mark.parametrize("reverse", [False, True], ids=["given-order", "reversed"])
def test_apply_writes_merges_in_path_order_whatever_the_result_order(reverse: bool) -> None:
    spec = fan_out(12)
    base = _checkpoint_at(spec, 1)
    tasks = prepare_tasks(spec, base, restore_channels(spec, base))
    results = [(t, run_task(spec, _call(t)).writes) for t in tasks]
    ckpt = copy.deepcopy(base)
    channels = restore_channels(spec, ckpt)
    apply_writes(spec, ckpt, channels, results[::-1] if reverse else results, ckpt.step + 1)
    values = save_channels(channels)
    # PULL tasks sort before PUSH ("__pregel_pull" < "__pregel_push"), as in LangGraph;
    # PUSH indexes sort numerically (2 before 10).
    assert values["log"] == ["plan", "other", *(f"work{i}" for i in range(12))]
    assert "__pregel_tasks" not in values  # Sends last one step
    assert "branch:to:other" not in values


def _call(task: Any) -> Any:
    from graphrun.engine import TaskCall

    return TaskCall(task=task)


def test_finish_step_with_reversed_results_gives_the_same_thread() -> None:
    spec = fan_out(12)
    a, b = Thread("t"), Thread("t")
    drive(spec, a, {"log": []})
    drive(spec, b, {"log": []}, reverse=True)
    assert [c.id for c in a.checkpoints] == [c.id for c in b.checkpoints]
    assert [c.channel_values for c in a.checkpoints] == [c.channel_values for c in b.checkpoints]
    assert [c.channel_versions for c in a.checkpoints] == [
        c.channel_versions for c in b.checkpoints]


def test_two_writes_to_a_last_value_key_name_the_nodes_and_keep_the_thread() -> None:
    def a(state: Any) -> dict[str, Any]:
        return {"note": "from a"}

    def b(state: Any) -> dict[str, Any]:
        return {"note": "from b"}

    spec = (StateGraph(State).add_node(a).add_node(b).add_edge(START, "a")
            .add_edge(START, "b").compile().spec)
    thread = Thread("t")
    run = Run(spec, thread, {"log": []}, clock=FakeClock())
    drive_step = lambda: run.finish_step(  # noqa: E731
        [run_task(spec, run.call_for(t)) for t in run.next_tasks()])
    drive_step()  # START
    before = (len(thread.checkpoints), thread.head.id, copy.deepcopy(thread.head.channel_versions))
    with pytest.raises(InvalidUpdateError) as info:
        drive_step()
    err = info.value
    assert (err.channel, err.step, err.nodes) == ("note", 1, ("a", "b"))
    assert "'a'" in str(err) and "'b'" in str(err) and "Annotated" in str(err)
    assert (len(thread.checkpoints), thread.head.id,
            thread.head.channel_versions) == before
    assert {p.status for p in thread.head.pending.values()} == {"done"}


# -- interrupts and resumes ----------------------------------------------------------------
def test_done_sibling_is_not_rerun_on_resume() -> None:
    calls: dict[str, int] = {}
    spec = (StateGraph(State).add_node("a", logger("a", calls)).add_node(asker("b", calls))
            .add_edge(START, "a").add_edge(START, "b").compile().spec)
    thread = Thread("t")
    run = drive(spec, thread, {"log": []})
    assert run.status == "interrupted"
    assert calls == {"a": 1, "b": 1}
    head = thread.head
    assert sorted(p.status for p in head.pending.values()) == ["done", "interrupted"]
    snap = snapshot(spec, thread, head)
    assert snap.next == ("b",)  # the done sibling is not shown as next
    assert snap.values["log"] == ["a"]  # but its writes are
    n = len(thread.checkpoints)
    run = drive(spec, thread, Command(resume="yes"))
    assert run.status == "done"
    assert calls == {"a": 1, "b": 2}
    assert run.output()["log"] == ["a", "b:yes"]
    assert len(thread.checkpoints) == n + 1
    assert thread.head.pending == {}


def two_askers(**compile_kw: Any) -> GraphSpec:
    return (StateGraph(State).add_node(asker("x")).add_node(asker("y"))
            .add_edge(START, "x").add_edge(START, "y").compile(**compile_kw).spec)


def test_resume_by_id_map_answers_each_pending_interrupt() -> None:
    spec = two_askers()
    thread = Thread("t")
    run = drive(spec, thread, {"log": []})
    ix, iy = run.interrupts
    assert (ix.value, iy.value) == ("x?", "y?")
    assert list(pending_interrupts(thread.head)) == [ix.id, iy.id]
    run = drive(spec, thread, Command(resume={iy.id: "Y"}))
    assert run.status == "interrupted"
    assert [i.id for i in run.interrupts] == [ix.id]
    run = drive(spec, thread, Command(resume={ix.id: "X"}))
    assert run.status == "done"
    assert run.output()["log"] == ["x:X", "y:Y"]


def _finished() -> tuple[GraphSpec, Thread]:
    spec = chain("a")
    thread = Thread("t")
    drive(spec, thread, {"log": []})
    return spec, thread


def _two_pending() -> tuple[GraphSpec, Thread]:
    spec = two_askers()
    thread = Thread("t")
    drive(spec, thread, {"log": []})
    return spec, thread


BAD_RESUMES = [
    ("finished-thread", _finished, Command(resume="late"), ["has finished", "strict_resume"]),
    ("never-started", lambda: (chain("a"), Thread("t")), Command(resume="x"),
     ["was never started"]),
    ("unknown-id", _two_pending, Command(resume={"0" * 32: "x"}),
     ["'" + "0" * 32 + "' is not pending", "Pending:"]),
    ("unknown-id-on-finished", _finished, Command(resume={"f" * 32: "x"}),
     ["is not pending", "none"]),
    ("ambiguous-single-value", _two_pending, Command(resume="one answer"),
     ["multiple pending interrupts", "interrupt id"]),
    ("ambiguous-with-update", _two_pending, Command(resume="v", update={"note": "changed"}),
     ["multiple pending interrupts"]),
]


@pytest.mark.parametrize("setup, command, fragments", [r[1:] for r in BAD_RESUMES],
                         ids=[r[0] for r in BAD_RESUMES])
def test_strict_resume_errors_leave_the_thread_unchanged(
        setup: Callable[[], tuple[GraphSpec, Thread]], command: Command,
        fragments: list[str]) -> None:
    spec, thread = setup()
    before = fingerprint(thread)
    pending = sorted(pending_interrupts(thread.head))
    with pytest.raises(InvalidResumeError) as info:
        drive(spec, thread, command)
    assert isinstance(info.value, RuntimeError)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))
    assert list(info.value.pending_ids) == pending or not info.value.pending_ids
    assert fingerprint(thread) == before


def test_strict_resume_errors_through_invoke_leave_checkpoints_unchanged() -> None:
    b = StateGraph(State).add_node("a", logger("a")).add_edge(START, "a")
    graph = b.compile(MemorySaver())
    with pytest.raises(InvalidResumeError, match="was never started"):
        graph.invoke(Command(resume=1), CONFIG)
    assert graph.checkpointer.threads["t"].checkpoints == []
    graph.invoke({"log": []}, CONFIG)
    thread = graph.checkpointer.threads["t"]
    before = (len(thread.checkpoints), thread.head.id)
    with pytest.raises(InvalidResumeError, match="has finished"):
        graph.invoke(Command(resume=1), CONFIG)
    assert (len(thread.checkpoints), thread.head.id) == before
    assert len(list(graph.get_state_history(CONFIG))) == before[0]


def test_lenient_resume_on_a_finished_thread_is_a_no_op() -> None:
    b = StateGraph(State).add_node("a", logger("a")).add_edge(START, "a")
    graph = b.compile(MemorySaver(), strict_resume=False)
    final = graph.invoke({"log": []}, CONFIG)
    thread = graph.checkpointer.threads["t"]
    before = fingerprint(thread)
    assert graph.invoke(Command(resume="late"), CONFIG) == final
    assert fingerprint(thread) == before
    assert graph.get_state(CONFIG).next == ()


def test_lenient_resume_still_refuses_an_ambiguous_answer() -> None:
    spec, thread = two_askers(strict_resume=False), Thread("t")
    drive(spec, thread, {"log": []})
    with pytest.raises(InvalidResumeError, match="multiple pending"):
        drive(spec, thread, Command(resume="v"))


def test_resume_without_checkpointer_is_refused() -> None:
    graph = StateGraph(State).add_node("a", logger("a")).add_edge(START, "a").compile()
    with pytest.raises(RuntimeError, match="without checkpointer"):
        graph.invoke(Command(resume=1))


def test_none_input_on_a_new_thread_is_an_empty_input_error() -> None:
    spec = chain("a")
    thread = Thread("t")
    with pytest.raises(EmptyInputError, match="no checkpoint to continue"):
        drive(spec, thread, None)
    assert thread.checkpoints == []


def test_interrupt_value_must_be_json() -> None:
    def bad(state: Any) -> None:
        interrupt({"callback": lambda: None})

    spec = StateGraph(State).add_node("picky", bad).add_edge(START, "picky").compile().spec
    thread = Thread("t")
    run = drive(spec, thread, {"log": []})
    assert run.status == "failed"
    (failed,) = run.failed
    assert failed.error is not None and failed.error["type"] == "TypeError"
    assert isinstance(failed.exception, TypeError)
    assert "node 'picky'" in str(failed.exception)
    assert "JSON" in str(failed.exception)
    graph = StateGraph(State).add_node("picky", bad).add_edge(START, "picky").compile(
        MemorySaver())
    with pytest.raises(TypeError, match="interrupt\\(\\) in node 'picky'"):
        graph.invoke({"log": []}, CONFIG)


def test_interrupt_accepts_pydantic_values() -> None:
    class Question(pydantic.BaseModel):
        text: str

    def ask(state: Any) -> dict[str, Any]:
        return {"log": [interrupt(Question(text="why?"))]}

    spec = StateGraph(State).add_node(ask).add_edge(START, "ask").compile().spec
    run = drive(spec, Thread("t"), {"log": []})
    assert run.interrupts[0].value == Question(text="why?")


class Approval(pydantic.BaseModel):
    approved: bool
    comment: str = ""


def test_response_schema_is_published_and_validates_the_answer() -> None:
    answers: list[Any] = []

    def ask(state: Any) -> dict[str, Any]:
        answer = interrupt({"q": "ship it?"}, response_schema=Approval)
        answers.append(answer)
        return {"log": [answer.approved]}

    spec = StateGraph(State).add_node(ask).add_edge(START, "ask").compile().spec
    thread = Thread("t")
    run = drive(spec, thread, {"log": []})
    (intr,) = run.interrupts
    assert isinstance(intr, Interrupt)
    assert intr.response_schema == Approval.model_json_schema()
    assert intr.response_schema["properties"]["approved"]["type"] == "boolean"

    before = fingerprint(thread)
    with pytest.raises(InvalidResumeError, match="node 'ask' does not match its response_schema"
                       ) as refused:
        drive(spec, thread, Command(resume={"approved": "perhaps"}))
    assert isinstance(refused.value, pydantic.ValidationError)  # as LangGraph raises
    assert [e["loc"] for e in refused.value.errors()] == [("approved",)]
    assert fingerprint(thread) == before
    assert answers == []
    assert pending_interrupts(thread.head) == {intr.id: intr}

    run = drive(spec, thread, Command(resume={"approved": True, "comment": "lgtm"}))
    assert run.status == "done"
    assert answers == [Approval(approved=True, comment="lgtm")]
    assert isinstance(answers[0], Approval)
    assert run.output()["log"] == [True]


def test_rejected_answer_does_not_apply_the_commands_update() -> None:
    def ask(state: Any) -> dict[str, Any]:
        return {"log": [interrupt("ok?", response_schema=Approval).approved]}

    spec = StateGraph(State).add_node(ask).add_edge(START, "ask").compile().spec
    thread = Thread("t")
    drive(spec, thread, {"log": [], "note": "original"})
    before = fingerprint(thread)
    with pytest.raises(InvalidResumeError):
        drive(spec, thread, Command(resume={"approved": "perhaps"}, update={"note": "changed"}))
    assert snapshot(spec, thread, thread.head).values["note"] == "original"
    assert fingerprint(thread) == before


# -- limits and failures -------------------------------------------------------------------
def test_recursion_limit() -> None:
    def spin(state: Any) -> dict[str, Any]:
        return {"log": ["spin"]}

    b = StateGraph(State).add_node(spin).add_edge(START, "spin")
    b.add_conditional_edges("spin", lambda s: "spin")
    spec = b.compile().spec
    thread = Thread("t")
    with pytest.raises(GraphRecursionError, match="Recursion limit of 5") as info:
        drive(spec, thread, {"log": []}, recursion_limit=5)
    assert isinstance(info.value, RecursionError)
    assert len(thread.checkpoints) == 6  # input + 5 supersteps (START counts)
    with pytest.raises(GraphRecursionError):
        b.compile().invoke({"log": []}, {"recursion_limit": 3})


@pytest.mark.parametrize("limit, ok", [(3, False), (4, True)])
def test_recursion_limit_counts_start_like_langgraph(limit: int, ok: bool) -> None:
    spec = chain("a", "b", "c")  # 4 supersteps: __start__, a, b, c
    if ok:
        assert drive(spec, Thread("t"), {"log": []}, recursion_limit=limit).status == "done"
    else:
        with pytest.raises(GraphRecursionError):
            drive(spec, Thread("t"), {"log": []}, recursion_limit=limit)


def test_failed_node_propagates_and_a_later_none_invoke_finishes_without_rerunning_siblings(
        ) -> None:
    calls: dict[str, int] = {}
    broken = {"on": True}

    def flaky(state: Any) -> dict[str, Any]:
        calls["flaky"] = calls.get("flaky", 0) + 1
        if broken["on"]:
            raise ValueError("flaky is broken")
        return {"log": ["flaky"]}

    b = (StateGraph(State).add_node("steady", logger("steady", calls)).add_node(flaky)
         .add_node("after", logger("after", calls))
         .add_edge(START, "steady").add_edge(START, "flaky").add_edge(["steady", "flaky"], "after"))
    graph = b.compile(MemorySaver())
    with pytest.raises(ValueError, match="flaky is broken"):
        graph.invoke({"log": []}, CONFIG)
    assert calls == {"steady": 1, "flaky": 1}
    state = graph.get_state(CONFIG)
    assert state.next == ("flaky",)
    assert state.values["log"] == ["steady"]
    (failed,) = [t for t in state.tasks if t.error is not None]
    assert failed.error == "ValueError('flaky is broken')" and failed.name == "flaky"
    assert failed.error.error_type == "ValueError"
    assert "flaky is broken" in str(failed.error)

    broken["on"] = False
    out = graph.invoke(None, CONFIG)
    assert out == {"log": ["flaky", "steady", "after"]}  # path order: flaky < steady
    assert calls == {"steady": 1, "flaky": 2, "after": 1}
    assert graph.get_state(CONFIG).next == ()


def test_failed_node_through_run_keeps_the_checkpoint() -> None:
    def boom(state: Any) -> None:
        raise ValueError("nope")

    spec = StateGraph(State).add_node(boom).add_edge(START, "boom").compile().spec
    thread = Thread("t")
    run = drive(spec, thread, {"log": []})
    assert run.status == "failed"
    assert run.failed[0].error == {"type": "ValueError", "message": "nope"}
    assert [c.step for c in thread.checkpoints] == [-1, 0]
    (p,) = thread.head.pending.values()
    assert p.status == "failed"


def test_task_result_is_plain_data() -> None:
    r = TaskResult(task_id="x", writes=[("log", ["a"])])
    assert r == TaskResult(task_id="x", writes=[("log", ["a"])])


def test_reading_a_thread_with_a_pending_command_update_does_not_change_it() -> None:
    """get_state / history on a head holding a resume Command's update leave it as it was.

    On Temporal these are queries, which must never change workflow state.
    """
    from graphrun import InMemorySaver, StateGraph, interrupt

    class Loop(TypedDict, total=False):
        note: str
        answer: int

    def ask(state: Loop) -> dict:
        first = interrupt("first?")
        second = interrupt("second?")
        return {"answer": first + second}

    graph = (StateGraph(Loop).add_node("ask", ask).add_edge(START, "ask")
             .compile(checkpointer=InMemorySaver()))
    config = {"configurable": {"thread_id": "read-only"}}
    graph.invoke({"note": "start"}, config)
    out = graph.invoke(Command(resume=1, update={"note": "updated"}), config)
    assert out["__interrupt__"][0].value == "second?"
    head = graph.checkpointer.threads["read-only"].head
    assert head.null_writes  # the update waits on the head until the step completes
    before = copy.deepcopy((head.channel_versions, head.versions_seen, head.channel_values))
    for _ in range(3):
        assert graph.get_state(config).values["note"] == "updated"
        list(graph.get_state_history(config))
    assert (head.channel_versions, head.versions_seen, head.channel_values) == before
    assert graph.invoke(Command(resume=2), config) == {"note": "updated", "answer": 3}


class RouteState(TypedDict):
    n: int


def test_a_routing_function_sees_its_nodes_extra_keys_unless_it_reads_a_schema() -> None:
    """LangGraph passes keys a node returned outside the state on to the node's routing
    functions that take a plain dict; one annotated with a schema reads that schema."""
    S = RouteState
    seen: dict[str, Any] = {}

    def plain(data: dict) -> str:
        seen["plain"] = dict(data)
        return "__end__"

    def typed(data: RouteState) -> str:
        seen["typed"] = dict(data)
        return "__end__"

    graph = (StateGraph(S).add_node("a", lambda s: {"n": s["n"] + 1, "hint": "x"})
             .add_edge(START, "a").add_conditional_edges("a", plain)
             .add_conditional_edges("a", typed).compile())
    assert graph.invoke({"n": 1}) == {"n": 2}
    assert seen == {"plain": {"n": 2, "hint": "x"}, "typed": {"n": 2}}
