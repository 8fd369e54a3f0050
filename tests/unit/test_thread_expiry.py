"""What a thread's TTL hands to the next run of its workflow (continue-as-new)."""

from __future__ import annotations

from workflows.ttl import ThreadExpiry

STARTED_WITH = {"strategy": "delete", "ttl": 5.0}


def test_a_ttl_taken_away_stays_away_in_the_next_run() -> None:
    expiry = ThreadExpiry(STARTED_WITH, "2026-12-01T00:00:00+00:00")
    assert expiry.carried(STARTED_WITH) == STARTED_WITH
    expiry.replace(None)
    assert expiry.carried(STARTED_WITH) is None


def test_a_ttl_that_does_not_parse_is_handed_on_as_given() -> None:
    odd = {"strategy": "archive", "ttl": 5.0}  # a strategy this version does not know
    assert ThreadExpiry(odd, "").carried(odd) == odd
