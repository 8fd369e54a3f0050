"""Differential conformance tests: every scenario on every driver must give
LangGraph's transcript.

Add a driver by extending DRIVER_FACTORIES (name -> zero-arg factory returning
a harness.Driver), e.g. from another module or a conftest::

    from tests.conformance.test_conformance import DRIVER_FACTORIES
    from tests.conformance.harness import GraphrunLocalDriver
    DRIVER_FACTORIES["graphrun"] = GraphrunLocalDriver

Every key other than "langgraph" gets the differential test.
"""

from __future__ import annotations

import pytest

from . import scenarios as _scenarios  # noqa: F401  (registers SCENARIOS)
from .harness import (
    SCENARIOS,
    Driver,
    GraphrunLocalDriver,
    LangGraphDriver,
    run_scenario,
    transcript_diff,
)

pytestmark = pytest.mark.conformance

DRIVER_FACTORIES: dict[str, type[Driver] | object] = {
    "langgraph": LangGraphDriver,
    "graphrun-local": GraphrunLocalDriver,
}


def _has_result(transcript: list) -> bool:
    """At least one normalised invoke result / snapshot / stream list."""

    def walk(x):
        if isinstance(x, dict) and ("values" in x or "next" in x):
            return True
        if isinstance(x, list):
            return any(walk(v) for v in x)
        return False

    return any(walk(x) for x in transcript)


async def assert_same_as_langgraph(scenario: str, driver: Driver) -> None:
    expected = await run_scenario(scenario, LangGraphDriver())
    actual = await run_scenario(scenario, driver)
    if expected != actual:
        pytest.fail(
            f"scenario {scenario!r}: driver {getattr(driver, 'name', driver)!r} differs from LangGraph\n"
            + transcript_diff(expected, actual, "langgraph", getattr(driver, "name", "driver")),
            pytrace=False,
        )


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_langgraph_deterministic(scenario: str) -> None:
    first = await run_scenario(scenario, LangGraphDriver())
    second = await run_scenario(scenario, LangGraphDriver())
    assert first, "empty transcript"
    assert _has_result(first), "transcript contains no normalised result"
    assert first == second, transcript_diff(first, second, "run1", "run2")


def _differential_params() -> list:
    params = [
        pytest.param(scenario, name, id=f"{name}-{scenario}")
        for name in DRIVER_FACTORIES
        if name != "langgraph"
        for scenario in SCENARIOS
    ]
    return params or [
        pytest.param(
            None, None, id="no-other-driver", marks=pytest.mark.skip("only langgraph registered")
        )
    ]


@pytest.mark.parametrize(("scenario", "driver_name"), _differential_params())
async def test_same_as_langgraph(scenario: str, driver_name: str) -> None:
    await assert_same_as_langgraph(scenario, DRIVER_FACTORIES[driver_name]())
