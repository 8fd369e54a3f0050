"""ThreadRecord: a thread that exists before (or without) its first run.

LangGraph's server keeps a row for a thread from `POST /threads` on; here the row is
a workflow of the thread's id that completes at once. Its memo holds the thread's
`metadata`, its search attributes say idle (and the graph, when known), so a later
`get`, `search` or run finds the thread. A run on it starts a GraphWorkflow of the
same id (as on a thread that never ran), which carries the metadata on.
"""

from __future__ import annotations

from temporalio import workflow


@workflow.defn(name="ThreadRecord")
class ThreadRecord:
    @workflow.run
    async def run(self) -> None:
        """Nothing to do: starting it was the point (its memo is the record)."""
