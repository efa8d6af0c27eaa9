"""A scripted Azure AI Agents service (the ``azure-ai-agents`` threads/runs REST API) on
127.0.0.1 (ephemeral port), for the ``azure-ai-agents`` source.

Unlike every other fake here, the model loop runs on the server: the client creates an agent,
a thread and a user message, starts a run and polls it; the service calls the model and, when
the model asks for a function call, puts the run in ``requires_action`` with the calls in
``required_action.submit_tool_outputs``. The client runs the functions and posts their outputs
(``submit_tool_outputs``), the service calls the model again, and a run whose model answers in
text ends ``completed`` with the answer added to the thread as an assistant message, which the
client reads by listing the thread's messages. So this server is the service and the scripted
model at once: each model turn is the scenario's next turn, counted per thread (the turns the
thread's runs have served), the same script ``fake_openai.py`` serves.

The paths are the service's (``/assistants``, ``/threads``, ``/threads/{id}/messages``,
``/threads/{id}/runs``, ``/threads/{id}/runs/{id}``, ``.../submit_tool_outputs``,
``.../steps``), each with the ``?api-version=`` query the SDK adds; ``DELETE /assistants/{id}``
answers as the service does. A run whose turn the scenario makes the model API fail
(``Scenario.model_fails_from``) ends ``failed`` with a ``server_error`` ``last_error``, as the
service reports a model failure, and ``ScriptedServer.failures_served`` counts it. A run is
answered ``queued`` when created and when tool outputs are posted, as the service answers; its
state after the model's turn is what the next poll (``GET``) reads. An answer the scenario cuts
off (``Scenario.cut``) is added as an ``incomplete`` message (``incomplete_details.reason``
``max_tokens`` / ``content_filter``) and ends the run ``incomplete``, as the service does.
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from scenarios import Scenario
from scripted_server import OUTAGE_MESSAGE, ScriptedServer

MODEL = "gpt-4o-mini"
CREATED = 1_800_000_000
MESSAGE_CUT = {"length": "max_tokens", "content_filter": "content_filter"}
"""A cut-off answer's message ``incomplete_details.reason`` (``Scenario.cut``)."""
RUN_CUT = {"length": "max_completion_tokens", "content_filter": "content_filter"}
"""The run's ``incomplete_details.reason``: the service ends the run ``incomplete``."""


def _text_content(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": {"value": text, "annotations": []}}]


class FakeAzureAgents:
    """``with FakeAzureAgents(scenario) as endpoint:`` serves the agents API until the block
    ends; ``endpoint`` is what ``AgentsClient(endpoint=...)`` takes."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.agents: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.turns: dict[str, int] = {}  # model turns served per thread
        self.steps: dict[str, list[dict[str, Any]]] = {}  # run steps per run
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                body = json.loads(raw) if raw else {}
                path, _, query = self.path.partition("?")
                with fake.lock:
                    status, payload = fake.answer(method, path.rstrip("/"), query, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _id(self, prefix: str) -> str:
        return f"{prefix}_capture{next(self.ids):04d}"

    # The REST routes --------------------------------------------------------------------
    def answer(self, method: str, path: str, query: str, body: dict[str, Any]) -> tuple[int, Any]:
        """The service's answer (status, JSON) to one request."""
        parts = path.strip("/").split("/")
        if parts[0] == "assistants":
            if method == "POST" and len(parts) == 1:
                agent = {"id": self._id("asst"), "object": "assistant", "created_at": CREATED,
                         "name": body.get("name"), "description": body.get("description"),
                         "model": body.get("model", MODEL),
                         "instructions": body.get("instructions"),
                         "tools": body.get("tools", []), "tool_resources": {},
                         "temperature": body.get("temperature"), "top_p": body.get("top_p"),
                         "response_format": body.get("response_format"),
                         "metadata": {}}  # fmt: skip
                self.agents[agent["id"]] = agent
                return 200, agent
            if method == "DELETE" and len(parts) == 2:
                self.agents.pop(parts[1], None)
                return 200, {"id": parts[1], "object": "assistant.deleted", "deleted": True}
        if parts[0] != "threads":
            return 404, {"error": {"message": f"not scripted: {method} {path}"}}
        if method == "POST" and len(parts) == 1:
            thread_id = self._id("thread")
            self.messages[thread_id] = []
            self.turns[thread_id] = 0
            for message in body.get("messages") or []:
                self._add_message(thread_id, message["role"], message["content"])
            return 200, {"id": thread_id, "object": "thread", "created_at": CREATED,
                         "tool_resources": {}, "metadata": {}}  # fmt: skip
        thread_id = parts[1]
        if thread_id not in self.messages:
            return 404, {"error": {"message": f"no thread {thread_id}"}}
        if parts[2:] == ["messages"]:
            if method == "POST":
                return 200, self._add_message(thread_id, body["role"], body["content"])
            data = list(self.messages[thread_id])  # oldest first, as stored
            if "order=asc" not in query:
                data.reverse()  # the service's default order is newest first
            return 200, self._page(data, query)
        if parts[2:3] == ["runs"]:
            if method == "POST" and len(parts) == 3:
                agent = self.agents[body.get("assistant_id") or body["agent_id"]]
                for message in body.get("additional_messages") or []:
                    self._add_message(thread_id, message["role"], message["content"])
                run = {"id": self._id("run"), "object": "thread.run", "created_at": CREATED,
                       "thread_id": thread_id, "assistant_id": agent["id"],
                       "model": body.get("model") or agent["model"],
                       "instructions": body.get("instructions") or agent["instructions"],
                       "tools": body.get("tools") or agent["tools"], "status": "queued",
                       "required_action": None, "last_error": None, "usage": None,
                       "incomplete_details": None, "metadata": {},
                       "parallel_tool_calls": True, "tool_resources": {}}  # fmt: skip
                self.runs[run["id"]] = run
                self.steps[run["id"]] = []
                self._model_turn(run)
                return 200, {**run, "status": "queued", "required_action": None}
            run = self.runs.get(parts[3]) if len(parts) > 3 else None
            if run is None:
                return 404, {"error": {"message": f"not scripted: {method} {path}"}}
            if method == "GET" and len(parts) == 4:
                return 200, run
            if method == "POST" and parts[4:] == ["submit_tool_outputs"]:
                return self._submit(run, body.get("tool_outputs") or [])
            if method == "POST" and parts[4:] == ["cancel"]:
                run.update(status="cancelled", required_action=None)
                return 200, run
            if method == "GET" and parts[4:] == ["steps"]:
                return 200, self._page(list(self.steps[run["id"]]), query)
        return 404, {"error": {"message": f"not scripted: {method} {path}"}}

    @staticmethod
    def _page(data: list[dict[str, Any]], query: str) -> dict[str, Any]:
        """One page of a list: everything after the ``after`` cursor (the SDK's pager asks
        again after the last id it got, until a page comes back empty)."""
        after = parse_qs(query).get("after", [None])[0]
        if after is not None:
            ids = [item["id"] for item in data]
            data = data[ids.index(after) + 1 :] if after in ids else []
        return {"object": "list", "data": data, "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None}  # fmt: skip

    def _add_message(
        self, thread_id: str, role: str, content: Any, run: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        text = content if isinstance(content, str) else json.dumps(content)
        message = {"id": self._id("msg"), "object": "thread.message", "created_at": CREATED,
                   "thread_id": thread_id, "status": "completed", "role": role,
                   "content": _text_content(text), "attachments": [], "metadata": {},
                   "incomplete_details": None, "completed_at": CREATED, "incomplete_at": None,
                   "assistant_id": run["assistant_id"] if run else None,
                   "run_id": run["id"] if run else None}  # fmt: skip
        self.messages[thread_id].append(message)
        return message

    # The scripted model, inside the service ------------------------------------------------
    def _model_turn(self, run: dict[str, Any]) -> None:
        """Call the scripted model for ``run``: the thread's next turn becomes the run's
        required action (function calls) or its answer (a completed run)."""
        thread_id = run["thread_id"]
        turn = self.turns[thread_id]
        self.turns[thread_id] = turn + 1
        if self.scenario.model_fails(turn):
            ScriptedServer.failures_served += 1
            run.update(status="failed", required_action=None,
                       last_error={"code": "server_error", "message": OUTAGE_MESSAGE})  # fmt: skip
            return
        step = self.scenario.turns[min(turn, len(self.scenario.turns) - 1)]
        usage = {"prompt_tokens": 40 + 10 * turn, "completion_tokens": 20,
                 "total_tokens": 60 + 10 * turn}  # fmt: skip
        total = run.get("usage") or {"prompt_tokens": 0, "completion_tokens": 0,
                                     "total_tokens": 0}  # fmt: skip
        run["usage"] = {key: total[key] + usage[key] for key in total}
        step_base = {"id": self._id("step"), "object": "thread.run.step", "created_at": CREATED,
                     "run_id": run["id"], "assistant_id": run["assistant_id"],
                     "thread_id": thread_id,
                     "status": "completed", "completed_at": CREATED, "cancelled_at": None,
                     "failed_at": None, "expired_at": None, "last_error": None,
                     "usage": usage, "metadata": {}}  # fmt: skip
        if isinstance(step, str):
            message = self._add_message(thread_id, "assistant", step, run)
            cut = self.scenario.cut_of(step)
            if cut is not None:  # the answer the model did not finish: an incomplete run
                message.update(status="incomplete", completed_at=None, incomplete_at=CREATED,
                               incomplete_details={"reason": MESSAGE_CUT[cut]})  # fmt: skip
                run.update(status="incomplete", required_action=None,
                           incomplete_details={"reason": RUN_CUT[cut]})  # fmt: skip
                return
            self.steps[run["id"]].append({**step_base, "type": "message_creation",
                "step_details": {"type": "message_creation",
                                 "message_creation": {"message_id": message["id"]}}})  # fmt: skip
            run.update(status="completed", required_action=None, completed_at=CREATED)
            return
        calls = [
            {"id": f"call_{turn}_{j}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for j, (name, args) in enumerate(step)
        ]  # fmt: skip
        self.steps[run["id"]].append({**step_base, "type": "tool_calls", "status": "in_progress",
            "completed_at": None,
            "step_details": {"type": "tool_calls",
                             "tool_calls": [{**call, "function": {**call["function"],
                                                                  "output": None}}
                                            for call in calls]}})  # fmt: skip
        action = {"type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": calls}}
        run.update(status="requires_action", required_action=action)

    def _submit(self, run: dict[str, Any], outputs: list[dict[str, Any]]) -> tuple[int, Any]:
        if run["status"] != "requires_action":
            return 400, {"error": {"message": f"run {run['id']} is {run['status']}"}}
        step = self.steps[run["id"]][-1]
        by_id = {output["tool_call_id"]: output.get("output") for output in outputs}
        for call in step["step_details"]["tool_calls"]:
            call["function"]["output"] = by_id.get(call["id"])
        step.update(status="completed", completed_at=CREATED)
        self._model_turn(run)
        return 200, {**run, "status": "queued", "required_action": None}
