"""graphrun's errors that stand for an exception known by name: which classes they are."""

from __future__ import annotations

import pickle

import pydantic
import pytest

from graphrun.errors import (
    InvalidResumeError,
    NodeFailedError,
    ReportedError,
    ResumeValidationError,
    answer_errors,
    invalid_resume,
)


@pytest.mark.parametrize("name, builtin", [("ValueError", ValueError),
                                           ("ConnectionError", ConnectionError),
                                           ("KeyError", KeyError), ("RuntimeError", RuntimeError)])
def test_a_builtin_error_is_that_class_too(name: str, builtin: type[Exception]) -> None:
    failed = NodeFailedError("pay", name, "declined")
    reported = ReportedError(name, "declined")
    assert isinstance(failed, NodeFailedError) and isinstance(failed, builtin)
    assert isinstance(reported, ReportedError) and isinstance(reported, builtin)
    assert str(failed) == f"node 'pay' failed: {name}: declined"  # not KeyError's repr
    assert (failed.node, failed.error_type, failed.error_message) == ("pay", name, "declined")
    assert str(reported) == "declined" and repr(reported) == f"{name}('declined')"
    assert type(NodeFailedError("other", name, "x")) is type(failed)  # one class per kind
    again = pickle.loads(pickle.dumps(failed))
    assert type(again) is type(failed) and str(again) == str(failed)


@pytest.mark.parametrize("name", ["PaymentDeclined", "os.system", "StopIteration",
                                  "UnicodeDecodeError", "ExceptionGroup", "DeprecationWarning",
                                  "KeyboardInterrupt", "print", ""])
def test_no_other_name_makes_a_class(name: str) -> None:
    # A user's class, a function, control flow, a warning, a BaseException: the name is
    # only data (error_type); the error stays graphrun's own class.
    assert type(NodeFailedError("pay", name, "x")) is NodeFailedError
    assert type(ReportedError(name, "x")) is ReportedError


def test_a_subclass_is_left_as_it_is() -> None:
    class Mine(NodeFailedError):
        pass

    assert type(Mine("pay", "ValueError", "x")) is Mine


def test_a_refused_answer_carries_pydantics_errors_as_data() -> None:
    class Approval(pydantic.BaseModel):
        approved: bool

    with pytest.raises(pydantic.ValidationError) as caught:
        Approval.model_validate({"approved": "perhaps", "extra": object()})
    answer = answer_errors(caught.value, "the answer to node 'ask' does not match")
    assert answer is not None
    rebuilt = invalid_resume("ignored", pickle.loads(pickle.dumps(answer)))
    assert isinstance(rebuilt, ResumeValidationError)
    assert isinstance(rebuilt, InvalidResumeError) and isinstance(rebuilt, RuntimeError)
    assert isinstance(rebuilt, pydantic.ValidationError)
    assert rebuilt.errors(include_url=False) == caught.value.errors(include_url=False)
    # pydantic's message but for its documentation link (a custom error type has none).
    assert str(rebuilt) == (f"the answer to node 'ask' does not match: "
                            f"{str(caught.value).rsplit(chr(10), 1)[0]}")
    assert rebuilt.answer() == answer
    assert answer_errors(ValueError("x"), "") is None
    plain = invalid_resume("no such interrupt")
    assert type(plain) is InvalidResumeError and str(plain) == "no such interrupt"
