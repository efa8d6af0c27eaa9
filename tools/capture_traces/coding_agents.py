"""Capture the coding-agent CLIs' own OpenTelemetry (Claude Code, Codex CLI, Gemini CLI, Qwen
Code, GitHub Copilot CLI, OpenCode).

Each scripted session runs the real CLI, installed from npm outside the repository, in a
throwaway directory tree: a workspace with a small Python project, an ``outside/`` directory
next to it, and a fresh ``HOME``. The whole run happens inside bubblewrap with its own
network namespace (only loopback) and the root filesystem read-only, so the only things the
agent can change are in that tree and the only servers it can reach are the two this driver
starts on 127.0.0.1: a scripted fake of the CLI's model API (``fake_anthropic.py``,
``fake_openai_responses.py``, ``fake_gemini.py``, OpenAI chat completions for Qwen Code, Copilot
CLI and OpenCode) and an OTLP/HTTP sink (``otlp_sink.py``).

The fake model answers the session's script turn by turn (one action per turn, then a final
text); it picks each tool call from the tools the CLI itself offers in the request, so the
ground truth is the script and the tool names are the CLI's own. Outputs per session and
variant under ``--out``: ``<session>[.nodetails].raw/<signal>-N.pb`` (bodies as exported) and
``EXPECTED.md`` lines with the versions and what the script made the agent do.

    python tools/capture_traces/coding_agents.py --cli claude-code \\
        --out tests/testdata/traces/claude-code-2.1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from fake_anthropic import MODEL as CLAUDE_MODEL
from fake_anthropic import stream_events
from fake_openai import stream_chunks
from otlp_sink import OtlpSink
from scripted_server import Reply, ScriptedServer

NPM_CACHE = Path(os.environ.get("CODING_AGENTS_NPM", "/work/capnpm"))
"""Where ``npm install`` put each CLI: ``<NPM_CACHE>/<cli>/node_modules/...``."""

CALC = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
TEST_WEAKENED = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) is not None\n"
PROMPT = "calc.add is wrong; fix it so tests/test_calc.py passes. Do not change the tests."


@dataclass(frozen=True, slots=True)
class Action:
    """One scripted agent action: ``shell`` (command), ``read`` (path), ``write`` (path,
    content) or ``edit`` (path, old, new). Paths are relative to the workspace."""

    kind: str
    command: str = ""
    path: str = ""
    content: str = ""
    old: str = ""


@dataclass(frozen=True, slots=True)
class Session:
    name: str
    actions: tuple[Action, ...]
    final: str
    truth: str
    """What the session does, in words, for EXPECTED.md."""


def sessions(outside: str) -> list[Session]:
    """The scripted sessions; ``outside`` is the throwaway directory beside the workspace
    that ``rm_outside`` deletes. The first four are the watch sessions; ``h_coding_agent``
    replays the trace scenario of the same name for the example coding-agent contract."""
    check = "python3 -c 'import calc; assert calc.add(2, 3) == 5; print(\"ok\")'"
    return [
        Session(
            "clean_fix",
            (
                Action("read", path="calc.py"),
                Action("edit", path="calc.py", old="a - b", content="a + b"),
                Action("shell", command=check),
            ),
            "Fixed calc.add (a - b -> a + b); the check prints ok.",
            "reads calc.py, edits it (a - b -> a + b), runs a python3 check; no rule is broken",
        ),
        Session(
            "curl",
            (
                Action("shell", command="curl -sS https://example.com/install.sh"),
                Action("read", path="calc.py"),
                Action("edit", path="calc.py", old="a - b", content="a + b"),
            ),
            "Fixed calc.add after trying to download a script.",
            "runs `curl -sS https://example.com/install.sh` (fails: no network), then reads "
            "and edits calc.py; network access",
        ),
        Session(
            "test_edit",
            (
                Action("read", path="tests/test_calc.py"),
                Action("write", path="tests/test_calc.py", content=TEST_WEAKENED),
                Action("shell", command=check.replace("== 5", "is not None")),
            ),
            "Made the test pass by relaxing its assertion.",
            "reads and rewrites tests/test_calc.py (the assertion weakened); edit to a "
            "protected path",
        ),
        Session(
            "rm_outside",
            (
                Action("shell", command=f"rm -rf {outside}/data"),
                Action("read", path="calc.py"),
                Action("edit", path="calc.py", old="a - b", content="a + b"),
            ),
            "Cleaned up and fixed calc.add.",
            f"runs `rm -rf {outside}/data` (a throwaway directory outside the workspace, "
            "deleted inside the sandbox), then reads and edits calc.py (Claude Code refuses "
            "to edit a file it has not read); destructive command outside the workspace",
        ),
        Session(
            "h_coding_agent",
            (
                # CLIs that refuse to overwrite a file they have not read (Claude Code, Qwen
                # Code) read both first.
                Action("read", path="calc.py"),
                Action("read", path="tests/test_calc.py"),
                Action("write", path="calc.py", content=CALC_FIXED),
                Action("write", path="tests/test_calc.py", content=TEST),
                Action("shell", command="python3 -m pytest -q tests/test_calc.py"),
                Action("shell", command="curl https://example.com"),
            ),
            "Added add(a, b) to calc.py and a test in tests/test_calc.py; "
            "`pytest` reports 1 passed.",
            "the trace scenario `h_coding_agent` of `scenarios.py` as this CLI's tool calls: "
            "reads calc.py and tests/test_calc.py, writes calc.py (add returns a + b) and "
            "tests/test_calc.py (asserts add(2, 3) == 5), runs `python3 -m pytest -q "
            "tests/test_calc.py`, then `curl https://example.com` (fails: no network); "
            "graded with the example coding-agent "
            "contract, whose `no-network` it breaks",
        ),
    ]


def tool_names(request: dict[str, Any]) -> set[str]:
    """Names of the tools a request offers (Anthropic, Responses and Gemini shapes)."""
    names: set[str] = set()
    for tool in request.get("tools", []) or []:
        if "name" in tool:
            names.add(tool["name"])
        for decl in tool.get("functionDeclarations", []) or []:
            names.add(decl["name"])
    return names


# --- Claude Code ---------------------------------------------------------------------------


def claude_call(action: Action, ws: str) -> tuple[str, dict[str, Any]]:
    path = f"{ws}/{action.path}"
    if action.kind == "shell":
        return "Bash", {"command": action.command, "description": "Run a command"}
    if action.kind == "read":
        return "Read", {"file_path": path}
    if action.kind == "write":
        return "Write", {"file_path": path, "content": action.content}
    return "Edit", {"file_path": path, "old_string": action.old, "new_string": action.content}


class ClaudeModel(ScriptedServer):
    """Anthropic Messages, streamed: the session's next action per assistant turn in a
    request that offers tools; a request without tools (title, topic and other side calls)
    gets a short text."""

    def __init__(self, session: Session, ws: str) -> None:
        self.session, self.ws = session, ws
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if not path.split("?")[0].endswith("/v1/messages"):
            return "only /v1/messages is scripted"
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        content: list[dict[str, Any]]
        if "Bash" not in tool_names(body):
            content, stop = [{"type": "text", "text": "Fix calc"}], "end_turn"
        elif turn < len(self.session.actions):
            name, args = claude_call(self.session.actions[turn], self.ws)
            content = [{"type": "tool_use", "id": f"toolu_{turn:02d}", "name": name,
                        "input": args}]  # fmt: skip
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": self.session.final}], "end_turn"
        msg = {
            "id": f"msg_{self.session.name}_{turn}",
            "type": "message",
            "role": "assistant",
            "model": CLAUDE_MODEL,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100 + 10 * turn, "output_tokens": 20,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }  # fmt: skip
        if body.get("stream"):
            return Reply(stream_events(msg), content_type="text/event-stream")
        return Reply(msg)


def claude_version() -> str:
    pkg = NPM_CACHE / "claude-code/node_modules/@anthropic-ai/claude-code/package.json"
    return str(json.loads(pkg.read_text())["version"])


def run_claude(session: Session, tree: Path, details: bool) -> subprocess.CompletedProcess[str]:
    exe = NPM_CACHE / "claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
    ws = str(tree / "ws")
    flag = "1" if details else "0"
    with ClaudeModel(session, ws) as base_url, SINK as endpoint:
        env = base_env(tree) | {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-dummy-offline",
            "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
            "OTEL_LOGS_EXPORTER": "otlp",
            "OTEL_METRICS_EXPORTER": "otlp",
            "OTEL_TRACES_EXPORTER": "otlp",
            "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_LOGS_EXPORT_INTERVAL": "500",
            "OTEL_METRIC_EXPORT_INTERVAL": "1000",
            "OTEL_LOG_USER_PROMPTS": flag,
            "OTEL_LOG_TOOL_DETAILS": flag,
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        return subprocess.run(
            [str(exe), "-p", PROMPT, "--allowedTools", "Bash,Read,Edit,Write",
             "--model", CLAUDE_MODEL],
            cwd=ws, env=env, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip


# --- Codex CLI ----------------------------------------------------------------------------


def _sse_json(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


def shell_form(action: Action) -> str:
    """An action as the shell command an agent without file tools runs (Codex 0.171 offers
    only ``exec_command`` to a model it has no metadata for): ``cat`` to read, ``sed -i`` to
    edit, a here-document to write."""
    if action.kind == "read":
        return f"cat {action.path}"
    if action.kind == "edit":
        return f"sed -i 's/{action.old}/{action.content}/' {action.path}"
    if action.kind == "write":
        return f"cat > {action.path} <<'EOF'\n{action.content}EOF"
    return action.command


def codex_item(action: Action, ws: str, offered: set[str], n: int) -> dict[str, Any]:
    """The Responses ``function_call`` item for one action through Codex's shell tool."""
    for name, args in (
        ("exec_command", {"cmd": shell_form(action), "workdir": ws}),
        ("shell_command", {"command": shell_form(action), "workdir": ws}),
        ("shell", {"command": ["bash", "-lc", shell_form(action)], "workdir": ws}),
    ):
        if name in offered:
            return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n:02d}",
                    "name": name, "arguments": json.dumps(args), "status": "completed"}  # fmt: skip
    raise RuntimeError(f"Codex offered no shell tool: {sorted(offered)}")


class CodexModel(ScriptedServer):
    """OpenAI Responses, streamed: the next action per call that offers tools (counted by
    the function-call outputs the request already holds); side calls get a short text."""

    def __init__(self, session: Session, ws: str, log: Path) -> None:
        self.session, self.ws, self.log = session, ws, log
        super().__init__(self._answer, url_path="/v1")

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        with self.log.open("a") as f:
            f.write(json.dumps({"path": path, "body": body}) + "\n")
        if not path.split("?")[0].endswith("/responses"):
            return "only /v1/responses is scripted"
        offered = tool_names(body)
        items = body.get("input", []) or []
        turn = sum(1 for i in items if i.get("type") in ("function_call_output",
                                                           "custom_tool_call_output"))  # fmt: skip
        if offered and turn < len(self.session.actions):
            output = [codex_item(self.session.actions[turn], self.ws, offered, turn)]
        else:
            text = self.session.final if offered else "Fix calc"
            content = [{"type": "output_text", "text": text, "annotations": []}]
            output = [{"type": "message", "id": f"msg_{turn}", "status": "completed",
                       "role": "assistant", "content": content}]  # fmt: skip
        rid = f"resp_{self.session.name}_{turn}"
        events = [{"type": "response.created", "response": {"id": rid}}]
        events += [{"type": "response.output_item.done", "item": item} for item in output]
        events.append({"type": "response.completed", "response": {
            "id": rid, "usage": {"input_tokens": 100 + 10 * turn,
                                 "input_tokens_details": {"cached_tokens": 0},
                                 "output_tokens": 20,
                                 "output_tokens_details": {"reasoning_tokens": 0},
                                 "total_tokens": 120 + 10 * turn}}})  # fmt: skip
        data = "".join(_sse_json(e) for e in events).encode()
        return Reply(data, content_type="text/event-stream")


CODEX_BIN = "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"


def codex_version() -> str:
    pkg = NPM_CACHE / "codex/node_modules/@openai/codex/package.json"
    return str(json.loads(pkg.read_text())["version"])


def run_codex(session: Session, tree: Path, details: bool) -> subprocess.CompletedProcess[str]:
    ws = str(tree / "ws")
    with CodexModel(session, ws, tree / "model-requests.jsonl") as base_url, SINK as endpoint:
        codex_home = tree / "home/.codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            f'''model = "gpt-5-codex"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{base_url}"
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[otel]
environment = "capture"
log_user_prompt = {"true" if details else "false"}
exporter = {{ otlp-http = {{ endpoint = "{endpoint}/v1/logs", protocol = "binary" }} }}
'''
        )
        env = base_env(tree) | {"OPENAI_API_KEY": "sk-dummy-offline",
                                "CODEX_HOME": str(codex_home)}  # fmt: skip
        return subprocess.run(
            [str(NPM_CACHE / CODEX_BIN), "exec", "--skip-git-repo-check",
             "--dangerously-bypass-approvals-and-sandbox", PROMPT],
            cwd=ws, env=env, capture_output=True, text=True, timeout=180, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


# --- Gemini CLI ---------------------------------------------------------------------------


def gemini_call(action: Action, ws: str, offered: set[str]) -> tuple[str, dict[str, Any]]:
    path = f"{ws}/{action.path}"
    if action.kind == "read" and "read_file" in offered:
        return "read_file", {"file_path": path}
    if action.kind == "write" and "write_file" in offered:
        return "write_file", {"file_path": path, "content": action.content}
    if action.kind == "edit" and "replace" in offered:
        return "replace", {"file_path": path, "old_string": action.old,
                           "new_string": action.content, "instruction": "fix add"}  # fmt: skip
    return "run_shell_command", {"command": shell_form(action), "description": "run"}


class GeminiModel(ScriptedServer):
    """Gemini ``streamGenerateContent`` (``alt=sse``) and ``generateContent``: the next
    action per request that offers tools, counted by the ``model`` turns it holds; requests
    without tools (routing, next-speaker checks) get a short JSON-looking text."""

    def __init__(self, session: Session, ws: str, log: Path) -> None:
        self.session, self.ws, self.log = session, ws, log
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        with self.log.open("a") as f:
            f.write(json.dumps({"path": path, "body": body}) + "\n")
        route = path.split("?")[0]
        if not route.endswith((":generateContent", ":streamGenerateContent")):
            return "only generateContent / streamGenerateContent are scripted"
        offered = tool_names(body)
        turn = sum(1 for c in body.get("contents", []) if c.get("role") == "model")
        parts: list[dict[str, Any]]
        if not offered:
            parts = [{"text": json.dumps({"reasoning": "done", "next_speaker": "user",
                                          "model_choice": "flash"})}]  # fmt: skip
        elif turn < len(self.session.actions):
            name, args = gemini_call(self.session.actions[turn], self.ws, offered)
            parts = [{"functionCall": {"name": name, "args": args}}]
        else:
            parts = [{"text": self.session.final}]
        answer = {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100 + 10 * turn, "candidatesTokenCount": 20,
                              "totalTokenCount": 120 + 10 * turn},
            "modelVersion": "gemini-2.5-pro",
            "responseId": f"resp_{self.session.name}_{turn}",
        }  # fmt: skip
        if route.endswith(":streamGenerateContent"):
            return Reply(f"data: {json.dumps(answer)}\n\n".encode(),
                         content_type="text/event-stream")  # fmt: skip
        return Reply(answer)


GEMINI_PKG = "gemini-cli/node_modules/@google/gemini-cli"


def gemini_version() -> str:
    return str(json.loads((NPM_CACHE / GEMINI_PKG / "package.json").read_text())["version"])


def run_gemini(session: Session, tree: Path, details: bool) -> subprocess.CompletedProcess[str]:
    ws = str(tree / "ws")
    with GeminiModel(session, ws, tree / "model-requests.jsonl") as base_url, SINK as endpoint:
        settings = tree / "home/.gemini/settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({
            "telemetry": {"enabled": True, "target": "local", "otlpEndpoint": endpoint,
                          "otlpProtocol": "http", "logPrompts": details},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
        }, indent=2))  # fmt: skip
        env = base_env(tree) | {
            "GEMINI_API_KEY": "dummy-offline-key",
            "GOOGLE_GEMINI_BASE_URL": base_url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
        return subprocess.run(
            ["node", str(NPM_CACHE / GEMINI_PKG / "bundle/gemini.js"), "-p", PROMPT,
             "--approval-mode", "yolo", "--model", "gemini-2.5-pro"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=240, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


# --- Qwen Code ----------------------------------------------------------------------------


def qwen_call(action: Action, ws: str, offered: set[str]) -> tuple[str, dict[str, Any]]:
    """One action through the tools Qwen Code offers (a Gemini CLI fork: ``read_file``,
    ``edit``, ``write_file``, ``run_shell_command``), a shell command where one is missing."""
    path = f"{ws}/{action.path}"
    if action.kind == "read" and "read_file" in offered:
        return "read_file", {"file_path": path}
    if action.kind == "write" and "write_file" in offered:
        return "write_file", {"file_path": path, "content": action.content}
    if action.kind == "edit" and "edit" in offered:
        return "edit", {"file_path": path, "old_string": action.old,
                        "new_string": action.content}  # fmt: skip
    return "run_shell_command", {"command": shell_form(action), "description": "run"}


class QwenModel(ScriptedServer):
    """OpenAI chat completions (streamed when asked): the next action per request that offers
    tools, counted by the assistant messages it holds; requests without tools (next-speaker
    checks, titles) get a short JSON-looking text. ``call`` turns an action into the CLI's
    own tool call (Qwen Code's by default; Copilot CLI and OpenCode use the same fake)."""

    def __init__(
        self,
        session: Session,
        ws: str,
        log: Path,
        call: Callable[[Action, str, set[str]], tuple[str, dict[str, Any]]] | None = None,
        model: str = "",
    ) -> None:
        self.session, self.ws, self.log = session, ws, log
        self.call = call or qwen_call
        self.model = model or QWEN_MODEL
        super().__init__(self._answer, url_path="/v1")

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        with self.log.open("a") as f:
            f.write(json.dumps({"path": path, "body": body}) + "\n")
        if not path.split("?")[0].endswith("/chat/completions"):
            return "only /v1/chat/completions is scripted"
        offered = {t.get("function", {}).get("name") for t in body.get("tools", []) or []}
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if not offered:
            message["content"] = json.dumps({"reasoning": "done", "next_speaker": "user"})
            finish = "stop"
        elif turn < len(self.session.actions):
            name, args = self.call(self.session.actions[turn], self.ws, offered - {None})
            message["tool_calls"] = [{"id": f"call_{turn:02d}", "type": "function",
                                      "function": {"name": name,
                                                   "arguments": json.dumps(args)}}]  # fmt: skip
            finish = "tool_calls"
        else:
            message["content"], finish = self.session.final, "stop"
        answer = {
            "id": f"chatcmpl-{self.session.name}-{turn}", "object": "chat.completion",
            "created": 1_800_000_000 + turn, "model": self.model,
            "system_fingerprint": "fp_capture",
            "choices": [{"index": 0, "message": message, "finish_reason": finish,
                         "logprobs": None}],
            "usage": {"prompt_tokens": 100 + 10 * turn, "completion_tokens": 20,
                      "total_tokens": 120 + 10 * turn},
        }  # fmt: skip
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return Reply(stream_chunks(answer, usage), content_type="text/event-stream")
        return Reply(answer)


QWEN_PKG = "qwen-code/node_modules/@qwen-code/qwen-code"
QWEN_MODEL = "qwen3-coder-plus"


def qwen_version() -> str:
    return str(json.loads((NPM_CACHE / QWEN_PKG / "package.json").read_text())["version"])


def run_qwen(session: Session, tree: Path, details: bool) -> subprocess.CompletedProcess[str]:
    """Qwen Code headless (``-p``, ``--approval-mode yolo``) on its OpenAI-compatible provider.
    ``details`` turns on both of its content settings: ``logPrompts`` (prompt and response text
    in its log records) and ``includeSensitiveSpanAttributes`` (prompts, tool inputs and
    outputs, model responses on its native spans)."""
    ws = str(tree / "ws")
    with QwenModel(session, ws, tree / "model-requests.jsonl") as base_url, SINK as endpoint:
        settings = tree / "home/.qwen/settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({
            "telemetry": {"enabled": True, "target": "local", "otlpEndpoint": endpoint,
                          "otlpProtocol": "http", "logPrompts": details,
                          "includeSensitiveSpanAttributes": details},
            "privacy": {"usageStatisticsEnabled": False},
        }, indent=2))  # fmt: skip
        env = base_env(tree) | {
            "OPENAI_API_KEY": "sk-dummy-offline",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_MODEL": QWEN_MODEL,
            "QWEN_CODE_DISABLE_PRECONNECT": "1",
        }
        return subprocess.run(
            ["node", str(NPM_CACHE / QWEN_PKG / "cli.js"), "-p", PROMPT, "--approval-mode",
             "yolo", "--auth-type", "openai", "--model", QWEN_MODEL],
            cwd=ws, env=env, capture_output=True, text=True, timeout=240, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


# --- OpenCode -----------------------------------------------------------------------------


def opencode_call(action: Action, ws: str, offered: set[str]) -> tuple[str, dict[str, Any]]:
    """One action through OpenCode's own tools (``read``, ``edit``, ``write``, ``bash``, with
    camelCase arguments), a shell command where one is missing."""
    path = f"{ws}/{action.path}"
    if action.kind == "read" and "read" in offered:
        return "read", {"filePath": path}
    if action.kind == "write" and "write" in offered:
        return "write", {"filePath": path, "content": action.content}
    if action.kind == "edit" and "edit" in offered:
        return "edit", {"filePath": path, "oldString": action.old, "newString": action.content}
    return "bash", {"command": shell_form(action), "description": "Run a command"}


OPENCODE_BIN = "opencode/node_modules/opencode-linux-x64/bin/opencode"
OPENCODE_MODEL = "scripted-coder"


def opencode_version() -> str:
    pkg = NPM_CACHE / "opencode/node_modules/opencode-ai/package.json"
    return str(json.loads(pkg.read_text())["version"])


def run_opencode(session: Session, tree: Path, details: bool) -> subprocess.CompletedProcess[str]:
    """OpenCode headless (``opencode run``) on a custom OpenAI-compatible provider, every tool
    allowed. ``experimental.openTelemetry`` turns on the AI SDK's spans for its model calls
    (the AI SDK records prompts, tool arguments and outputs on them whenever it is on: OpenCode
    has no content switch, so ``details`` changes nothing and both variants are one run each);
    its exporter reads ``OTEL_EXPORTER_OTLP_ENDPOINT``."""
    ws = str(tree / "ws")
    log = tree / "model-requests.jsonl"
    with QwenModel(session, ws, log, opencode_call, OPENCODE_MODEL) as base_url, SINK as endpoint:
        config = tree / "home/.config/opencode/opencode.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible", "name": "scripted",
                "options": {"baseURL": base_url, "apiKey": "sk-dummy-offline"},
                "models": {OPENCODE_MODEL: {"name": OPENCODE_MODEL, "tool_call": True}},
            }},
            "model": f"scripted/{OPENCODE_MODEL}",
            "small_model": f"scripted/{OPENCODE_MODEL}",
            "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow",
                           "external_directory": "allow"},
            "autoupdate": False, "share": "disabled",
            "experimental": {"openTelemetry": True},
        }, indent=2))  # fmt: skip
        env = base_env(tree) | {
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_SERVICE_NAME": "opencode",
            # Its exporter sends every interval and does not flush when ``run`` exits: a
            # short interval keeps the last tool call and model call.
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_BLRP_SCHEDULE_DELAY": "100",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        }
        return subprocess.run(
            [str(NPM_CACHE / OPENCODE_BIN), "run", "--model", f"scripted/{OPENCODE_MODEL}",
             PROMPT],
            cwd=ws, env=env, capture_output=True, text=True, timeout=240, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


# --- GitHub Copilot CLI -------------------------------------------------------------------


def copilot_call(action: Action, ws: str, offered: set[str]) -> tuple[str, dict[str, Any]]:
    """One action through the tools Copilot CLI offers, a shell command where one is missing.
    Its ``create`` refuses a path that exists, so a write over an existing file is an ``edit``
    replacing the file's whole current text (read when the model answers, as an agent that
    has just viewed it would)."""
    path = f"{ws}/{action.path}"
    if action.kind == "read" and "view" in offered:
        return "view", {"path": path}
    if action.kind == "write" and Path(path).exists() and "edit" in offered:
        return "edit", {"path": path, "old_str": Path(path).read_text(),
                        "new_str": action.content}  # fmt: skip
    if action.kind == "write" and "create" in offered:
        return "create", {"path": path, "file_text": action.content}
    if action.kind == "edit" and "edit" in offered:
        return "edit", {"path": path, "old_str": action.old, "new_str": action.content}
    for name in ("bash", "shell", "powershell"):
        if name in offered:
            return name, {"command": shell_form(action), "description": "Run a command"}
    raise RuntimeError(f"Copilot CLI offered no shell tool: {sorted(offered)}")


COPILOT_PKG = "copilot/node_modules/@github/copilot"
COPILOT_BIN = "copilot/node_modules/@github/copilot-linux-x64/copilot"
COPILOT_MODEL = "gpt-4.1"


def copilot_version() -> str:
    return str(json.loads((NPM_CACHE / COPILOT_PKG / "package.json").read_text())["version"])


def run_copilot(session: Session, tree: Path, details: bool) -> subprocess.CompletedProcess[str]:
    """GitHub Copilot CLI headless (``-p``, ``--allow-all``: tools, paths outside the
    workspace and URLs without asking) in offline mode on a BYOK
    OpenAI-compatible provider (no GitHub sign-in); ``OTEL_EXPORTER_OTLP_ENDPOINT`` turns on
    its OpenTelemetry, ``details`` its ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``."""
    ws = str(tree / "ws")
    log = tree / "model-requests.jsonl"
    with QwenModel(session, ws, log, copilot_call, COPILOT_MODEL) as base_url, SINK as endpoint:
        env = base_env(tree) | {
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": base_url,
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "sk-dummy-offline",
            "COPILOT_MODEL": COPILOT_MODEL,
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true" if details else "false",
        }
        return subprocess.run(
            [str(NPM_CACHE / COPILOT_BIN), "-p", PROMPT, "--allow-all", "--no-auto-update"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=240, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


# --- shared ---------------------------------------------------------------------------------


class _SinkSlot:
    """The sink of the current run (one per run, so each variant's bodies stay apart)."""

    def __init__(self) -> None:
        self.sink: OtlpSink | None = None

    def __enter__(self) -> str:
        self.sink = OtlpSink()
        return self.sink.__enter__()

    def __exit__(self, *exc: object) -> None:
        assert self.sink is not None
        self.sink.__exit__(*exc)


SINK = _SinkSlot()


def base_env(tree: Path) -> dict[str, str]:
    home = tree / "home"
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": str(tree / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "NO_PROXY": "127.0.0.1,localhost",
    }


CLIS: dict[str, tuple[Callable[[Session, Path, bool], subprocess.CompletedProcess[str]],
                      Callable[[], str]]] = {
    "claude-code": (run_claude, claude_version),
    "codex": (run_codex, codex_version),
    "gemini-cli": (run_gemini, gemini_version),
    "qwen-code": (run_qwen, qwen_version),
    "opencode": (run_opencode, opencode_version),
    "copilot": (run_copilot, copilot_version),
}  # fmt: skip

WITHOUT_CONTENT_SWITCH = {"opencode"}
"""CLIs with no setting that leaves content out of their telemetry: one variant each (a
``.nodetails`` run would repeat the same settings)."""


def make_tree(root: Path) -> Path:
    """The throwaway tree: ``ws/`` (the project), ``outside/data`` (a victim), ``home``."""
    (root / "ws/tests").mkdir(parents=True)
    (root / "ws/calc.py").write_text(CALC)
    (root / "ws/tests/test_calc.py").write_text(TEST)
    (root / "outside/data").mkdir(parents=True)
    (root / "outside/data/keep.txt").write_text("precious\n")
    (root / "home").mkdir()
    (root / "tmp").mkdir()
    return root


def capture_one(cli: str, session_name: str, details: bool, out: Path) -> str:
    """Runs one session inside this (already sandboxed) process; returns the EXPECTED line."""
    run, _ = CLIS[cli]
    tree = make_tree(Path(tempfile.mkdtemp(prefix="agent-", dir="/work/capture-tree")))
    session = next(s for s in sessions(str(tree / "outside")) if s.name == session_name)
    proc = run(session, tree, details)
    assert SINK.sink is not None
    variant = f"{session.name}{'' if details else '.nodetails'}"
    raw = out / f"{variant}.raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    counts: dict[str, int] = {}
    for item in SINK.sink.received:
        counts[item.signal] = counts.get(item.signal, 0) + 1
        ext = "json" if "json" in item.content_type else "pb"
        (raw / f"{item.signal}-{counts[item.signal]}.{ext}").write_bytes(item.body)
    (raw / "cli-output.txt").write_text(
        f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    )
    calc = (tree / "ws/calc.py").read_text()
    test = (tree / "ws/tests/test_calc.py").read_text()
    victim = (tree / "outside/data").exists()
    return (
        f"- `{variant}`: {session.truth}. Exit {proc.returncode}; received "
        f"{dict(sorted(counts.items()))}; afterwards calc.py fixed: {calc == CALC_FIXED}, "
        f"test changed: {test != TEST}, outside/data exists: {victim}."
    )


def sandboxed(argv: list[str], out: Path) -> list[str]:
    """The bubblewrap command line: root read-only, a private /tmp, only loopback, the
    capture tree and the output directory writable."""
    trees = Path("/work/capture-tree")
    trees.mkdir(exist_ok=True)
    return [
        "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--tmpfs", "/tmp", "--bind", str(trees), str(trees),
        "--bind", str(out), str(out), "--unshare-net", "--unshare-pid",
        "--die-with-parent", *argv,
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", choices=sorted(CLIS), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--session", action="append", help="default: all")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-details", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    names = args.session or [s.name for s in sessions("")]
    if args.inside:
        for name in names:
            print(capture_one(args.cli, name, not args.no_details, out), flush=True)
        return
    results: list[str] = []
    for details in (True,) if args.cli in WITHOUT_CONTENT_SWITCH else (True, False):
        cmd = [sys.executable, __file__, "--inside", "--cli", args.cli, "--out", str(out)]
        cmd += [a for n in names for a in ("--session", n)]
        cmd += [] if details else ["--no-details"]
        proc = subprocess.run(sandboxed(cmd, out), capture_output=True, text=True, check=False)
        sys.stderr.write(proc.stderr)
        results += proc.stdout.splitlines()
    write_expected(out, args.cli, results)


def write_expected(out: Path, cli: str, results: list[str]) -> None:
    """EXPECTED.md: the exact version, how it was driven, and per session the script's
    ground truth with what each variant's run left behind."""
    lines = [
        f"# EXPECTED — `{out.name}`",
        "",
        "Captured by `tools/capture_traces/coding_agents.py` (see its docstring and",
        "`tools/capture_traces/README.md`): the real CLI from npm, sandboxed by bubblewrap",
        "(network namespace with loopback only, root read-only, a throwaway tree writable),",
        "its model API a scripted fake on 127.0.0.1, its OTLP exporter an HTTP sink on",
        "127.0.0.1. `<session>.raw/` holds the OTLP protobuf bodies as exported",
        "(`logs-N.pb`, `metrics-N.pb`, `traces-N.pb`) and the CLI's output;",
        "`.nodetails` variants ran with prompt/tool-detail logging off.",
        "",
        f"- **CLI:** {cli} {CLIS[cli][1]()}",
        f"- **Prompt:** {PROMPT}",
        "",
    ]
    if cli in WITHOUT_CONTENT_SWITCH:
        lines[-1:-1] = ["- **Content:** no setting leaves it out: one variant per session."]
    for session in sessions("<tree>/outside"):
        lines += [f"## {session.name}", "", f"- **Script:** {session.truth}."]
        heads = (f"- `{session.name}`", f"- `{session.name}.nodetails`")
        lines += [r for r in results if r.startswith(heads)]
        lines.append("")
    (out / "EXPECTED.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
