"""A workflow that waits and does nothing: Temporal's own cost of one open workflow on
this machine, the baseline bench/threads.py sets graphrun's thread creation against."""

from temporalio import workflow


@workflow.defn(name="BenchNoOp")
class NoOp:
    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: False)
