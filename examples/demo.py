"""The quickstart demo: a purchase approval that pauses on Temporal and resumes by signal.

    make demo          # or: python -m examples.demo

It starts an embedded Temporal dev server (with its Web UI), a graphrun worker
serving examples/purchase.py, runs the purchase until it asks for approval,
prints the question and the thread's page in the UI, then answers with a plain
`resume` signal (what any service or `temporal workflow signal` would send)
and prints the final state.
"""

import asyncio
import os
import sys
import uuid

from temporalio.client import Client

from examples import purchase
from graphrun.client import GraphClient, data_converter
from graphrun.devserver import DevServer
from graphrun.worker import create_worker

TASK_QUEUE = "graphrun-demo"


async def main() -> dict:
    ui = os.environ.get("GRAPHRUN_DEMO_UI", "1") != "0"
    async with DevServer(ui=ui) as server:
        print(f"Temporal dev server on {server.address}" +
              (f", Web UI at {server.ui_url}" if server.ui_url else ""))
        client = await Client.connect(server.address, data_converter=data_converter)
        async with create_worker(client, {purchase.NAME: purchase.graph}, task_queue=TASK_QUEUE):
            gc = GraphClient(client, task_queue=TASK_QUEUE)
            graph = gc.graph(purchase.NAME)
            thread_id = f"order-42-{uuid.uuid4().hex[:6]}"
            config = {"configurable": {"thread_id": thread_id}}

            result = await graph.ainvoke(
                {"item": "GPU rental, 8 hours", "amount": 96.00, "status": "pending"}, config)
            question = result["__interrupt__"][0]
            print(f"\nThread {thread_id} is paused and waits for a human:")
            print(f"  {question.value}")
            print(f"  interrupt id: {question.id}")
            if server.ui_url:
                print(f"  see it in the UI: {server.ui_url}/namespaces/default/workflows/"
                      f"{thread_id}")

            print("\nApproving with a plain signal: {\"resume\": true}")
            await gc.resume(thread_id, True)
            for _ in range(200):
                state = await graph.aget_state(config)
                if not state.next:
                    break
                await asyncio.sleep(0.05)
            print(f"Final state: {state.values}")
            if state.values.get("status") != "charged":
                raise SystemExit(f"unexpected final state: {state.values}")
            return state.values


if __name__ == "__main__":
    asyncio.run(main())
    # Skip interpreter finalization: temporalio's runtime threads can abort it
    # (sdk-python#300), which would turn a good run into exit code 134.
    sys.stdout.flush()
    os._exit(0)
