"""The Functional API scenarios (tests/conformance/functional.py) on graphrun in-process
give LangGraph's transcripts; tests/temporal/test_functional_conformance_temporal.py runs
them on Temporal."""

from __future__ import annotations

import pytest

from .functional import (
    FUNCTIONAL_SCENARIOS,
    FuncDriver,
    InProcessFuncDriver,
    graphrun_func_api,
    langgraph_func_api,
    run_functional,
    transcript_diff,
)

pytestmark = pytest.mark.conformance


async def assert_functional_same_as_langgraph(scenario: str, driver: FuncDriver) -> None:
    expected = await run_functional(scenario, InProcessFuncDriver("langgraph",
                                                                  langgraph_func_api()))
    actual = await run_functional(scenario, driver)
    assert expected, "empty transcript"
    if expected != actual:
        pytest.fail(f"scenario {scenario!r} on {driver.name} differs from LangGraph\n"
                    + transcript_diff(expected, actual, "langgraph", driver.name),
                    pytrace=False)


@pytest.mark.parametrize("scenario", list(FUNCTIONAL_SCENARIOS))
async def test_functional_same_as_langgraph(scenario: str) -> None:
    await assert_functional_same_as_langgraph(
        scenario, InProcessFuncDriver("graphrun", graphrun_func_api()))
