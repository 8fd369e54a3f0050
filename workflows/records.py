"""What the Server API keeps on Temporal besides threads: user assistants and cron firings.

`AssistantRecord`: one workflow per assistant a user created, holding its versions.
Its memo is the current version, so the API reads an assistant by describe and lists
them by visibility without a worker; an update makes a new version or picks an older
one; the `delete` update ends it.

`CronRun`: what a cron's Temporal Schedule starts at each firing. Its one activity
(`run_cron`) makes an ordinary graphrun run, on the cron's thread or on a new one.

Both are deterministic and run no user code. The ids, memo keys and payloads below are
the contract between the API (graphrun/server) and the activity.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict
from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeKey
from temporalio.exceptions import ApplicationError

from .handover import next_run_version, version_moved

with workflow.unsafe.imports_passed_through():
    from graphrun import visibility

ASSISTANT_WORKFLOW = "AssistantRecord"
CRON_WORKFLOW = "CronRun"
CRON_ACTIVITY = "run_cron"
ASSISTANT_MEMO = "assistant"  # the current version, as the API shows it
CRON_MEMO = "cron"  # what a cron search filters on without describing each schedule
GRAPH_NAME = SearchAttributeKey.for_keyword("GraphName")
# A run ends when its graph ends or pauses; an agent may take a while. The heartbeat
# notices a lost worker long before.
CRON_RUN_TIMEOUT = timedelta(hours=24)
CRON_HEARTBEAT = timedelta(seconds=30)


def assistant_workflow_id(id_prefix: str, assistant_id: str) -> str:
    return f"{id_prefix}graphrun-assistant-{assistant_id}"


def cron_schedule_id(id_prefix: str, cron_id: str) -> str:
    return f"{id_prefix}graphrun-cron-{cron_id}"


def cron_run_workflow_id(id_prefix: str, cron_id: str) -> str:
    """The firings' id; the Schedule appends each firing's time."""
    return f"{id_prefix}graphrun-cron-run-{cron_id}"


async def current_assistant(client: Any, workflow_id: str) -> dict[str, Any] | None:
    """A user assistant's current version, from its workflow's memo (no worker needed);
    None when no AssistantRecord of that id runs. Client side: the API and the cron
    activity read it."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError, RPCStatusCode

    try:
        desc = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
    if desc.workflow_type != ASSISTANT_WORKFLOW or desc.status != WorkflowExecutionStatus.RUNNING:
        return None
    found: dict[str, Any] | None = await desc.memo_value(ASSISTANT_MEMO, None)
    return found


def presets(assistant: dict[str, Any], config: dict[str, Any] | None,
            context: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A run's config and context laid over its assistant's, as LangGraph's server does:
    the run's keys win, `configurable` is merged key by key."""
    base = assistant.get("config") or {}
    config = config or {}
    merged = {**base, **config}
    configurable = {**(base.get("configurable") or {}), **(config.get("configurable") or {})}
    if configurable:
        merged["configurable"] = configurable
    ctx = {**(assistant.get("context") or {}), **(context or {})}
    return merged, ctx or None


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True)


class AssistantStart(_Payload):
    """An assistant's record: its versions (JSON, as the API shows them) and the current one."""

    versions: list[dict[str, Any]]
    latest: int = 1
    created_at: str
    updated_at: str = ""
    search_attributes: bool = True  # keep GraphName current (off where it is not registered)


class AssistantChange(_Payload):
    """The `patch` update: what the new version changes (None: kept as it is)."""

    graph_id: str | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None  # merged into the current metadata
    name: str | None = None
    description: str | None = None


@workflow.defn(name=ASSISTANT_WORKFLOW)
class AssistantRecord:
    """One user assistant: lives until deleted, continuing as new when history grows."""

    @workflow.init
    def __init__(self, start: AssistantStart) -> None:
        self._versions = list(start.versions)
        self._latest = start.latest
        self._created_at = start.created_at
        self._updated_at = start.updated_at or start.created_at
        self._search_attributes = start.search_attributes
        self._deleted = False

    @workflow.run
    async def run(self, start: AssistantStart) -> None:
        await workflow.wait_condition(
            lambda: self._deleted or workflow.info().is_continue_as_new_suggested()
            or version_moved())
        await workflow.wait_condition(workflow.all_handlers_finished)
        if not self._deleted:
            workflow.continue_as_new(self._carried(), memo={ASSISTANT_MEMO: self.current()},
                                     initial_versioning_behavior=next_run_version())

    def _carried(self) -> AssistantStart:
        return AssistantStart(versions=self._versions, latest=self._latest,
                              created_at=self._created_at, updated_at=self._updated_at,
                              search_attributes=self._search_attributes)

    @workflow.signal
    def upgrade(self) -> None:
        """Wake the record, so that, pinned to an earlier worker version, it moves to the
        one its task queue now targets (`GraphClient.upgrade_threads`)."""

    @workflow.query
    def current(self) -> dict[str, Any]:
        version = next(v for v in self._versions if v["version"] == self._latest)
        return {**version, "created_at": self._created_at, "updated_at": self._updated_at}

    @workflow.query
    def versions(self) -> list[dict[str, Any]]:
        return list(self._versions)

    @workflow.update
    def patch(self, change: AssistantChange) -> dict[str, Any]:
        now = workflow.now().isoformat()
        old = self.current()
        given = change.model_dump(exclude_none=True)
        new = {k: old[k] for k in ("assistant_id", "graph_id", "config", "context", "metadata",
                                   "name", "description")}
        new.update(given)
        new["metadata"] = {**old["metadata"], **given.get("metadata", {})}
        new["version"] = max(v["version"] for v in self._versions) + 1
        new["created_at"] = now
        self._versions.append(new)
        return self._publish(new["version"], now)

    @patch.validator
    def _patch_allowed(self, change: AssistantChange) -> None:
        self._refuse_if_deleted()

    @workflow.update
    def set_latest(self, version: int) -> dict[str, Any]:
        return self._publish(version, workflow.now().isoformat())

    @set_latest.validator
    def _version_known(self, version: int) -> None:
        self._refuse_if_deleted()
        if not any(v["version"] == version for v in self._versions):
            raise ApplicationError(f"Assistant {self._versions[0]['assistant_id']!r} has no "
                                   f"version {version}.", type="VersionNotFound",
                                   non_retryable=True)

    @workflow.update
    def delete(self) -> None:
        self._deleted = True

    def _refuse_if_deleted(self) -> None:
        if self._deleted:
            raise ApplicationError("The assistant was deleted.", type="AssistantDeleted",
                                   non_retryable=True)

    def _publish(self, version: int, now: str) -> dict[str, Any]:
        """Make `version` current; the memo (what the API reads) follows."""
        self._latest = version
        self._updated_at = now
        current = self.current()
        workflow.upsert_memo({ASSISTANT_MEMO: current})
        if self._search_attributes:
            # The same write, so a history from before these attributes replays as run;
            # visibility then filters assistants by metadata (graphrun.visibility).
            workflow.upsert_search_attributes([
                GRAPH_NAME.value_set(current["graph_id"]),
                visibility.UPDATED_AT.value_set(visibility.stamp(workflow.now())),
                visibility.METADATA.value_set(visibility.metadata_entries(
                    current.get("metadata") or {}))])
        return current


class CronRunRequest(_Payload):
    """A cron's firing, as its Schedule starts it. `payload` is the cron as created and
    patched (LangGraph's `Cron.payload`); the run fields below are derived from it."""

    cron_id: str
    assistant_id: str  # the assistant's UUID (a graph's default assistant for a graph id)
    graph_id: str
    assistant_record: str = ""  # a user assistant's workflow id: its presets apply at firing
    thread_id: str | None = None  # None: each firing runs on a new thread
    input: Any = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    interrupt_before: list[str] | str | None = None
    interrupt_after: list[str] | str | None = None
    on_run_completed: str = "delete"  # a new thread's fate once its run ends: delete | keep
    payload: dict[str, Any] = {}
    webhook_options: dict[str, Any] = {}  # InvokeRequest.webhook_options
    created_at: str = ""
    # The API's GraphClient settings, so the run's thread is where the API looks for it.
    id_prefix: str = ""
    search_attributes: bool = True
    max_history: int = 100
    history_event_limit: int = 10_000


class CronRunCall(_Payload):
    """The `run_cron` activity's input: the firing and the thread it runs on."""

    request: CronRunRequest
    thread_id: str


class CronRunResult(_Payload):
    thread_id: str
    status: str  # success | error (LangGraph's run statuses; a pause is a success)
    interrupted: bool = False  # it stopped at an interrupt() or a breakpoint
    error: str | None = None


@workflow.defn(name=CRON_WORKFLOW)
class CronRun:
    """One firing of a cron: one run, on the cron's thread or a new one."""

    @workflow.run
    async def run(self, request: CronRunRequest) -> CronRunResult:
        # Chosen here, so a replay (or the activity's report) names the same thread.
        thread_id = request.thread_id or str(workflow.uuid4())
        result: CronRunResult = await workflow.execute_activity(
            CRON_ACTIVITY, CronRunCall(request=request, thread_id=thread_id),
            result_type=CronRunResult, start_to_close_timeout=CRON_RUN_TIMEOUT,
            heartbeat_timeout=CRON_HEARTBEAT,
            # A run is not idempotent: a second attempt would send its input again.
            retry_policy=RetryPolicy(maximum_attempts=1))
        return result
