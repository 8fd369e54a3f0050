// LangGraph's JS SDK (@langchain/langgraph-sdk) against graphrun's LangGraph Server API.
//
//   node sdk_check.mjs http://127.0.0.1:2024      (or GRAPHRUN_API_URL=...)
//
// The server must serve the graphs of tests/server/conftest.py: "purchase" (pauses
// with interrupt() for approval), "agent" (create_agent, human in the loop), "broken"
// (its node raises ValueError), and "errand" (tests/server/js/support.py). Each
// check runs on its own (a failing one does not stop the others) and records what
// the SDK answered; the script prints one JSON report on stdout:
//
//   {"sdk_version": "...", "checks": {"<name>": {...observed} | {"error": "..."}}}
//
// and exits 0 whatever the checks found: tests/server/test_js_sdk.py asserts on it.
// GRAPHRUN_JS_MODULES names the node_modules folder to load the SDK from (the test
// installs it in a cache outside the repo); without it, the usual resolution applies.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const url = process.argv[2] || process.env.GRAPHRUN_API_URL;
if (!url) {
  console.error("usage: node sdk_check.mjs API_URL (or set GRAPHRUN_API_URL)");
  process.exit(2);
}
const CHECK_TIMEOUT_MS = Number(process.env.GRAPHRUN_JS_CHECK_TIMEOUT_MS || 20000);

async function loadSdk() {
  const modules = process.env.GRAPHRUN_JS_MODULES;
  if (!modules) {
    const sdk = await import("@langchain/langgraph-sdk");
    return { sdk, version: null };
  }
  const root = join(modules, "@langchain", "langgraph-sdk");
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const entry = pkg.exports["."].import.default ?? pkg.exports["."].import;
  const sdk = await import(pathToFileURL(join(root, entry)).href);
  return { sdk, version: pkg.version };
}

const { sdk, version } = await loadSdk();
// No retries: a failure shows as it happened, and fast.
const client = new sdk.Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });

const PURCHASE = { item: "GPU rental, 8 hours", amount: 96.0, status: "pending" };

async function collect(gen) {
  const events = [];
  for await (const part of gen) events.push([part.event, part.data]);
  return events;
}

async function failure(promise) {
  // What a call that should fail threw: its message and HTTP status, or null if it did not.
  try {
    await promise;
    return null;
  } catch (err) {
    return { message: String(err?.message ?? err), status: err?.status ?? null };
  }
}

async function newThread(graphId = "purchase") {
  return (await client.threads.create({ graphId })).thread_id;
}

const checks = {
  // A thread run to its interrupt, found by status, resumed by value.
  async interrupt_and_resume() {
    const created = await client.threads.create({ graphId: "purchase" });
    const tid = created.thread_id;
    let runCreated = null;
    const paused = await client.runs.wait(tid, "purchase", {
      input: PURCHASE,
      onRunCreated: (meta) => { runCreated = meta; },
    });
    const found = await client.threads.search({
      status: "interrupted", metadata: { graph_id: "purchase" }, limit: 100,
    });
    const mine = found.find((t) => t.thread_id === tid) ?? null;
    const count = await client.threads.count({
      status: "interrupted", metadata: { graph_id: "purchase" },
    });
    const state = await client.threads.getState(tid);
    const resumed = await client.runs.wait(tid, "purchase", { command: { resume: true } });
    const after = await client.threads.get(tid);
    const history = await client.threads.getHistory(tid, { limit: 3 });
    const stillInterrupted = await client.threads.search({
      status: "interrupted", metadata: { graph_id: "purchase" }, limit: 100,
    });
    return {
      thread_id: tid,
      created_status: created.status,
      run_created: runCreated,
      paused,
      found: mine && { status: mine.status, metadata: mine.metadata,
                       interrupts: mine.interrupts, values: mine.values },
      count,
      state: { next: state.next, values: state.values,
               interrupts: state.interrupts ?? null,
               task_interrupts: state.tasks.map((t) => t.interrupts) },
      resumed,
      after: { status: after.status, values: after.values, interrupts: after.interrupts },
      history: history.map((h) => h.values.status),
      still_listed: stillInterrupted.some((t) => t.thread_id === tid),
    };
  },

  // runs.stream with a streamMode array, to the interrupt, then a streamed resume.
  async stream_modes() {
    const tid = await newThread();
    const first = await collect(client.runs.stream(tid, "purchase", {
      input: PURCHASE, streamMode: ["values", "updates", "custom"],
    }));
    const resumed = await collect(client.runs.stream(tid, "purchase", {
      command: { resume: true }, streamMode: ["values", "updates", "custom"],
    }));
    const state = await client.threads.getState(tid);
    return { first, resumed, final_values: state.values, final_next: state.next };
  },

  // A failing node: runs.wait throws (raiseError default), or answers __error__;
  // the thread is "error"; runs.stream ends with an "error" event.
  async failing_node() {
    const tid = await newThread("broken");
    const thrown = await failure(client.runs.wait(tid, "broken", { input: { item: "pen" } }));
    const tid2 = await newThread("broken");
    const answered = await client.runs.wait(tid2, "broken", {
      input: { item: "pen" }, raiseError: false,
    });
    const thread = await client.threads.get(tid2);
    const tid3 = await newThread("broken");
    const streamed = await collect(client.runs.stream(tid3, "broken", {
      input: { item: "pen" }, streamMode: ["values", "updates"],
    }));
    return { thrown, answered, thread_status: thread.status, streamed };
  },

  // updateState on a paused thread: new values, then as the paused node itself.
  async update_state() {
    const tid = await newThread();
    await client.runs.wait(tid, "purchase", { input: PURCHASE });
    const updated = await client.threads.updateState(tid, { values: { amount: 50.0 } });
    const mid = await client.threads.getState(tid);
    const asNode = await client.threads.updateState(tid, {
      values: { status: "approved" }, asNode: "request_approval",
    });
    const skipped = await client.threads.getState(tid);
    const done = await client.runs.wait(tid, "purchase", { input: null });
    return {
      updated_checkpoint: updated.checkpoint ?? null,
      as_node_checkpoint: asNode.checkpoint ?? null,
      after_update: { values: mid.values, next: mid.next },
      after_as_node: { values: skipped.values, next: skipped.next },
      done,
    };
  },

  // Stateless runs: runs.wait(null, ...) and runs.stream(null, ...).
  async stateless() {
    const waited = await client.runs.wait(null, "purchase", { input: PURCHASE });
    const streamed = await collect(client.runs.stream(null, "purchase", {
      input: PURCHASE, streamMode: "updates",
    }));
    return { waited, streamed };
  },

  // LangChain's create_agent with the human-in-the-loop middleware, answered as
  // Agent Inbox answers it.
  async agent_approval() {
    const tid = await newThread("agent");
    const paused = await client.runs.wait(tid, "agent", { input: {
      messages: [{ role: "user", content: "Pay INV-7 from ACME, 1200 EUR" }] } });
    const done = await client.runs.wait(tid, "agent", {
      command: { resume: { decisions: [{ type: "approve" }] } } });
    const last = done.messages[done.messages.length - 1];
    return { request: paused.__interrupt__?.[0]?.value ?? null,
             last: { type: last.type, content: last.content } };
  },

  // --- Background runs (being built): create, join, joinStream, cancel, reject. ---

  async background_create_join() {
    const tid = await newThread();
    const run = await client.runs.create(tid, "purchase", { input: PURCHASE });
    const joined = await client.runs.join(tid, run.run_id);
    const got = await client.runs.get(tid, run.run_id);
    const listed = await client.runs.list(tid);
    return {
      run: { run_id: run.run_id, thread_id: run.thread_id, status: run.status,
             assistant_id: run.assistant_id },
      joined,
      got_status: got.status,
      listed: listed.map((r) => r.run_id),
    };
  },

  async background_join_stream() {
    const tid = await newThread();
    await client.runs.wait(tid, "purchase", { input: PURCHASE });
    const run = await client.runs.create(tid, "purchase", {
      command: { resume: true }, streamMode: ["values", "updates"], streamResumable: true,
    });
    // "-1": replay the run's events from its start (what useStream does on reconnect).
    const events = await collect(client.runs.joinStream(tid, run.run_id, { lastEventId: "-1" }));
    const state = await client.threads.getState(tid);
    return { events, final_values: state.values };
  },

  // The v3 protocol's state, agent and input commands, through a ThreadStream: on a
  // purchase paused at its question, then on the agent given a message by input.inject.
  async v3_thread_commands() {
    const tid = await newThread("purchase");
    await client.runs.wait(tid, "purchase", { input: PURCHASE });
    const thread = client.threads.stream(tid, { assistantId: "purchase" });
    try {
      const tree = await thread.agent.getTree();
      const state = await thread.state.get({ namespace: [], keys: ["status"] });
      const listed = await thread.state.listCheckpoints({ limit: 2 });
      const older = await thread.state.listCheckpoints({ before: listed.checkpoints[0].id });
      const forked = await thread.state.fork({ checkpoint_id: listed.checkpoints[1].id });
      await client.runs.join(tid, forked.run_id);
      const refused = await failure(thread.input.inject({
        namespace: [], message: { role: "user", content: "hi" } }));
      const missing = await failure(thread.state.fork({ checkpoint_id: "nope" }));
      return { tree, state, listed, older, forked_thread: forked.thread_id === tid,
               forked_run: typeof forked.run_id, refused, missing };
    } finally {
      await thread.close();
    }
  },

  async v3_input_inject() {
    const tid = await newThread("agent");
    await client.runs.wait(tid, "agent", {
      input: { messages: [{ role: "user", content: "Hello" }] } });
    const thread = client.threads.stream(tid, { assistantId: "agent" });
    try {
      const answer = await thread.input.inject({ namespace: [], message: {
        role: "user", content: "Pay INV-7 from ACME, 1200 EUR" } });
      let status = null;
      for (let i = 0; i < 200 && status !== "interrupted"; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await client.threads.get(tid)).status;
      }
      const state = await client.threads.getState(tid);
      return { answer: answer ?? null, status,
               messages: state.values.messages.map((m) => [m.type, m.content]) };
    } finally {
      await thread.close();
    }
  },

  // On "errand" (a node that takes a few seconds), a background run is still running
  // when the next call comes: cancelled with wait, it ends "interrupted".
  async background_cancel() {
    const tid = await newThread("errand");
    const run = await client.runs.create(tid, "errand", { input: { item: "pen" } });
    const refused = await failure(client.runs.cancel(tid, run.run_id, true));
    const got = await client.runs.get(tid, run.run_id);
    const thread = await client.threads.get(tid);
    return { created_status: run.status, refused, run_status: got.status,
             thread_status: thread.status, values: thread.values };
  },

  // A second run on a thread busy with a "errand" one, with multitaskStrategy "reject":
  // LangGraph's server refuses it with 409.
  async multitask_reject() {
    const tid = await newThread("errand");
    const first = await client.runs.create(tid, "errand", { input: { item: "pen" } });
    const second = await failure(client.runs.create(tid, "errand", {
      input: { item: "pencil" }, multitaskStrategy: "reject",
    }));
    await failure(client.runs.cancel(tid, first.run_id)); // tidy up; not checked
    return { first_status: first.status, second };
  },
};

function withTimeout(promise, ms) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

const only = (process.env.GRAPHRUN_JS_CHECKS || "").split(",").filter(Boolean);
const report = { sdk_version: version, api_url: url, checks: {}, seconds: {} };
for (const [name, check] of Object.entries(checks)) {
  if (only.length && !only.includes(name)) continue;
  const started = Date.now();
  try {
    report.checks[name] = await withTimeout(check(), CHECK_TIMEOUT_MS);
  } catch (err) {
    report.checks[name] = {
      error: `${err?.name ?? "Error"}: ${err?.message ?? err}`,
      status: err?.status ?? null,
    };
  }
  report.seconds[name] = (Date.now() - started) / 1000;
}
process.stdout.write(JSON.stringify(report, null, 1) + "\n");
process.exit(0); // a timed-out check may leave a request open
