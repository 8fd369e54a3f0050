"""Channels: save()/restore() round-trips, and each channel's update rules."""

from __future__ import annotations

import operator
from typing import Any

import pytest

from graphrun.channels import (
    MISSING,
    BinaryOperatorAggregate,
    Channel,
    EphemeralValue,
    LastValue,
    NamedBarrierValue,
    Overwrite,
    Topic,
)
from graphrun.errors import GraphrunError, InvalidUpdateError
from graphrun.types import Send


def _roundtrip(ch: Channel) -> Channel:
    return ch.restore(ch.save())


# -- round-trips -----------------------------------------------------------------
@pytest.mark.parametrize("spec, writes, expected", [
    (LastValue("x"), [1], 1),
    (LastValue("x"), [None], None),  # None is a value, not "missing"
    (LastValue("x"), [{"a": [1, 2]}], {"a": [1, 2]}),
    (BinaryOperatorAggregate("log", operator.add, list), [["a"], ["b"]], ["a", "b"]),
    (BinaryOperatorAggregate("n", operator.add), [1, 2, 3], 6),
    (EphemeralValue("branch:to:a"), [None], None),
    (EphemeralValue("e"), ["v"], "v"),
    (Topic("__pregel_tasks"), [Send("a", 1), Send("b", 2)], [Send("a", 1), Send("b", 2)]),
], ids=["last", "last-none", "last-dict", "agg-list", "agg-int", "ephemeral-none",
        "ephemeral", "topic"])
def test_channel_roundtrips_through_save_and_restore(spec: Channel, writes: list[Any],
                                                      expected: Any) -> None:
    ch = spec.restore()
    for w in writes:
        ch.update([w])
    if isinstance(spec, Topic):  # a topic keeps one step's writes
        ch = spec.restore()
        ch.update(writes)
    back = _roundtrip(ch)
    assert type(back) is type(spec)
    assert back.key == spec.key
    assert back.is_available()
    assert back.get() == expected
    assert back.save() == ch.save()


@pytest.mark.parametrize("spec", [
    LastValue("x"), BinaryOperatorAggregate("n", operator.add), EphemeralValue("e"),
    Topic("t"), NamedBarrierValue("j", ["a", "b"]),
], ids=lambda c: type(c).__name__)
def test_empty_channel_saves_missing_and_restores_empty(spec: Channel) -> None:
    ch = spec.restore()
    assert ch.save() is MISSING
    back = ch.restore(ch.save())
    assert not back.is_available()
    assert back.save() is MISSING


def test_named_barrier_roundtrips_partial_and_full() -> None:
    spec = NamedBarrierValue("join:a+b:c", ["a", "b"])
    ch = spec.restore()
    ch.update(["a"])
    assert ch.save() == ["a"]
    back = _roundtrip(ch)
    assert not back.is_available()
    back.update(["b"])
    full = _roundtrip(back)
    assert full.save() == ["a", "b"]
    assert full.is_available()


def test_restore_does_not_share_state_with_the_spec_or_the_saved_data() -> None:
    spec = NamedBarrierValue("j", ["a", "b"])
    saved = ["a"]
    ch = spec.restore(saved)
    ch.update(["b"])
    assert saved == ["a"]
    assert spec.restore().save() is MISSING
    topic = Topic("t")
    packets = [Send("a", 1)]
    t = topic.restore(packets)
    t.update([Send("b", 2)])
    assert packets == [Send("a", 1)]


def test_aggregate_with_initial_restores_to_its_zero_value() -> None:
    ch = BinaryOperatorAggregate("log", operator.add, list).restore()
    assert ch.is_available() and ch.get() == []


def test_aggregate_initial_that_cannot_be_called_means_missing() -> None:
    class NoZero:
        def __init__(self, required: int) -> None: ...

    ch = BinaryOperatorAggregate("x", operator.add, NoZero).restore()
    assert not ch.is_available()


# -- LastValue -------------------------------------------------------------------
def test_last_value_keeps_the_last_write_across_steps() -> None:
    ch = LastValue("x").restore()
    assert ch.update([1]) is True
    assert ch.update([2]) is True
    assert ch.update([]) is False
    assert ch.get() == 2


def test_last_value_two_writes_in_one_step_is_a_helpful_error() -> None:
    ch = LastValue("answer").restore()
    with pytest.raises(InvalidUpdateError) as info:
        ch.update([1, 2], step=4, nodes=["alpha", "beta"])
    err = info.value
    assert isinstance(err, GraphrunError)
    msg = str(err)
    assert "'answer'" in msg
    assert "'alpha'" in msg and "'beta'" in msg
    assert "step 4" in msg
    assert "Annotated" in msg and "reducer" in msg
    assert err.channel == "answer"
    assert err.step == 4
    assert err.nodes == ("alpha", "beta")
    assert not ch.is_available()  # nothing was applied


# -- BinaryOperatorAggregate ----------------------------------------------------------
def test_aggregate_folds_writes_in_order() -> None:
    ch = BinaryOperatorAggregate("log", operator.add, list).restore()
    ch.update([["a"], ["b"]])
    ch.update([["c"]])
    assert ch.get() == ["a", "b", "c"]


def test_aggregate_uses_a_non_commutative_reducer_left_to_right() -> None:
    ch = BinaryOperatorAggregate("s", lambda old, new: f"({old}{new})").restore()
    ch.update(["a", "b", "c"])
    assert ch.get() == "((ab)c)"  # first write is the seed, then reducer(old, new)


def test_aggregate_with_no_writes_is_unchanged() -> None:
    ch = BinaryOperatorAggregate("log", operator.add, list).restore(["a"])
    assert ch.update([]) is False
    assert ch.get() == ["a"]


def test_overwrite_bypasses_the_reducer() -> None:
    ch = BinaryOperatorAggregate("log", operator.add, list).restore(["a", "b"])
    ch.update([Overwrite(["z"])])
    assert ch.get() == ["z"]


@pytest.mark.parametrize("writes", [
    [["b"], Overwrite(["z"]), ["c"]],
    [["b"], {"__overwrite__": ["z"]}, ["c"]],
    [["b"], {"type": "__overwrite__", "value": ["z"]}],
])
def test_an_overwrite_discards_the_steps_other_writes_as_in_langgraph(writes: list) -> None:
    from langgraph.channels.binop import BinaryOperatorAggregate as LangGraphAggregate
    from langgraph.types import Overwrite as LangGraphOverwrite

    ours = BinaryOperatorAggregate("log", operator.add, list).restore(["a"])
    ours.update(writes)
    theirs = LangGraphAggregate(list, operator.add).from_checkpoint(["a"])
    theirs.update([LangGraphOverwrite(w.value) if isinstance(w, Overwrite) else w
                   for w in writes])
    assert ours.get() == theirs.get() == ["z"]
    assert repr(Overwrite(1)) == "Overwrite(value=1)"


def test_two_overwrites_in_one_step_are_an_error() -> None:
    ch = BinaryOperatorAggregate("log", operator.add, list).restore(["a"])
    with pytest.raises(InvalidUpdateError, match="only one Overwrite value per super-step"):
        ch.update([Overwrite(["y"]), Overwrite(["z"])], step=3, nodes=["a", "b"])


# -- EphemeralValue ----------------------------------------------------------------
def test_ephemeral_clears_on_an_empty_update() -> None:
    ch = EphemeralValue("e").restore()
    assert ch.update(["v"]) is True
    assert ch.is_available()
    assert ch.update([]) is True  # cleared: a change
    assert not ch.is_available()
    assert ch.update([]) is False  # already empty: no change
    assert ch.save() is MISSING


def test_ephemeral_keeps_the_last_of_several_writes() -> None:
    ch = EphemeralValue("e").restore()
    ch.update(["a", "b"])
    assert ch.get() == "b"


# -- Topic -------------------------------------------------------------------------
def test_topic_holds_one_steps_writes() -> None:
    ch = Topic("t").restore()
    assert ch.update([Send("a", 1)]) is True
    assert ch.get() == [Send("a", 1)]
    assert ch.update([]) is True  # cleared
    assert not ch.is_available()
    assert ch.update([]) is False


# -- NamedBarrierValue --------------------------------------------------------------
def test_barrier_available_only_when_every_name_was_seen() -> None:
    ch = NamedBarrierValue("j", ["a", "b"]).restore()
    assert ch.update(["a"]) is True
    assert not ch.is_available()
    assert ch.update(["a"]) is False  # seen already
    assert ch.update(["stranger"]) is False  # not a named source
    assert not ch.is_available()
    assert ch.update(["b"]) is True
    assert ch.is_available()
    assert ch.get() is None


def test_barrier_consume_resets_only_when_full() -> None:
    ch = NamedBarrierValue("j", ["a", "b"]).restore()
    ch.update(["a"])
    assert ch.consume() is False
    assert ch.save() == ["a"]
    ch.update(["b"])
    assert ch.consume() is True
    assert not ch.is_available()
    assert ch.save() is MISSING
    assert ch.consume() is False


def test_other_channels_consume_is_a_no_op() -> None:
    for ch in (LastValue("x").restore(1), EphemeralValue("e").restore("v"),
               Topic("t").restore([1])):
        assert ch.consume() is False
        assert ch.is_available()
