"""The seeds' runnable examples as graphrun graphs.

Each module exposes:

- ``build(checkpointer=None)``: compiles the graph under its registered name;
- ``graph``: ``build()`` with no checkpointer, the object a Temporal worker
  serves (``create_worker(client, graphs={graph.name: graph})``);
- ``main()``: runs the example in-process with ``InMemorySaver``, printing
  what the seed prints, and returns the final state.

Run one with ``python -m examples.purchase`` (from the repository root).
"""

EXAMPLES = (
    "purchase",
    "approval",
    "review",
    "email_tool",
    "validation",
    "multi_interrupt",
    "subgraph",
    "breakpoints",
    "purchase_functional",
    "agent_approval",
)
