"""A graph whose state passes Temporal's 2 MB payload limit, for `graphrun dev` tests."""

from tests.temporal.storage_helpers import big_state_graph

SIZE = 3_000_000
graph = big_state_graph("large", size=SIZE)
