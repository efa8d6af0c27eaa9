"""Text a trace controls (agent and span names, tool names, error texts) reaches a terminal
through the console table, ``inspect`` and the ``error:``/``note:`` lines. A terminal acts on
escape sequences instead of showing them: a trace naming its agent ``\\x1b]0;...\\x07`` retitled
the window, ``\\x1b[2J`` cleared the screen (and with it the failing rows above), ``\\r``
overwrote a line. Every such character must come out as its visible escape.

Run through the real CLI in a subprocess, over a real capture whose names were made hostile."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "examples" / "traces" / "pydantic-ai-d_forbidden_tool.otlp.json"
CLI = str(Path(sys.executable).with_name("otel-oracles"))

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31m\r\x9b1m\u202e"
"""Window title, clear screen, red, carriage return, 8-bit CSI, right-to-left override."""

ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_trace(path: Path) -> Path:
    """The capture with HOSTILE in its agent name, root span name and forbidden tool's name."""
    document = json.loads(TRACE.read_text())
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attribute in span["attributes"]:
                    value = attribute["value"]
                    if attribute["key"] in ("gen_ai.agent.name", "agent_name"):
                        value["stringValue"] = "support_agent" + HOSTILE
                    if attribute["key"] == "gen_ai.tool.name" and "delete" in value.get(
                        "stringValue", ""
                    ):
                        value["stringValue"] = "delete_records" + HOSTILE
                if span["name"].startswith("invoke_agent"):
                    span["name"] = "invoke_agent support" + HOSTILE
                if span["name"].startswith("execute_tool delete"):
                    span["name"] = "execute_tool delete_records" + HOSTILE
    path.write_text(json.dumps(document))
    return path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120, check=False)


def assert_shown_not_obeyed(text: str) -> None:
    found = sorted({f"{ord(c):#x}" for c in ACTED_ON.findall(text)})
    assert not found, f"control characters reached the terminal: {found}\n{text!r}"
    assert "\\x1b]0;owned\\x07" in text, text  # shown, escaped


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_trace(tmp_path_factory.mktemp("escapes") / "hostile.otlp.json")


def test_grade_table(trace: Path) -> None:
    result = run("grade", str(trace), "-c", str(REPO / "bench" / "contracts" / "any-agent.yaml"))
    assert "1 verdict(s)" in result.stdout, result.stderr
    assert_shown_not_obeyed(result.stdout)


def test_grade_table_verbose_full_explanations(trace: Path, tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "id: c\nversion: 1\ninvariants: [{type: max_tool_calls, max: 0}]\n"
        "tolerances: [{type: tool_errors, max: 0, why: none}]\n"
    )
    result = run("grade", str(trace), "-c", str(contract), "--verbose", "--explain", "full")
    assert result.returncode == 1, result.stderr
    assert_shown_not_obeyed(result.stdout)
    assert "(delete_records\\x1b]0;owned" in result.stdout  # the tool, as the check named it


def test_nothing_graded_line_names_what_was_seen(trace: Path, tmp_path: Path) -> None:
    contract = tmp_path / "none.yaml"
    contract.write_text(
        "id: none\nversion: 1\nmatch: [{root_name: nothing-has-this-name}]\n"
        "invariants: [{type: max_tool_calls, max: 1}]\n"
    )
    result = run("grade", str(trace), "-c", str(contract))
    assert result.returncode == 2
    assert "nothing graded" in result.stderr
    assert_shown_not_obeyed(result.stderr)


def test_inspect(trace: Path) -> None:
    result = run("inspect", str(trace))
    assert result.returncode == 0, result.stderr
    assert_shown_not_obeyed(result.stdout)


def test_input_problem_quoting_a_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "\x1b]0;owned\x07"}]}]}]}\n'
    )
    result = run("grade", str(bad), "-c", str(REPO / "bench" / "contracts" / "any-agent.yaml"))
    assert result.returncode == 2
    found = sorted({f"{ord(c):#x}" for c in ACTED_ON.findall(result.stderr)})
    assert not found, result.stderr


def test_watch_once_lines(tmp_path: Path) -> None:
    """``watch`` shows what a coding agent ran: a command holding escapes (an agent told by a
    prompt injection to run ``printf '\\x1b]0;...'``) is shown escaped, the alert still raised."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    source = REPO / "tests" / "testdata" / "traces" / "claude-code-2.1" / "rm_outside.raw"
    capture = tmp_path / "rm_outside.raw"
    capture.mkdir()
    for body in sorted(source.glob("logs-*.pb")):
        request = ExportLogsServiceRequest()
        request.ParseFromString(body.read_bytes())
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                for record in scope.log_records:
                    for attribute in record.attributes:
                        text = attribute.value.string_value
                        if "rm -rf" in text:
                            attribute.value.string_value = text.replace(
                                "rm -rf", "rm -rf" + json.dumps(HOSTILE)[1:-1]
                            )
        (capture / body.name).write_bytes(request.SerializeToString())
    result = run("watch", "--once", str(capture), "--sessions-dir", str(tmp_path / "sessions"))
    assert "ALERT" in result.stdout and "destructive_command" in result.stdout, result.stdout
    assert_shown_not_obeyed(result.stdout + result.stderr)


def test_pytest_plugin_failure_text(trace: Path, tmp_path: Path) -> None:
    """The plug-in's failure text (``--oo-explain full`` quotes the checks' messages and the
    offending steps' tool names) lands on the terminal and in CI logs like the table."""
    contract = tmp_path / "c.yaml"
    contract.write_text("id: c\nversion: 1\ninvariants: [{type: max_tool_calls, max: 0}]\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         f"--oo-contracts={contract}", f"--oo-traces={trace}", "--oo-explain", "full"],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "max_tool_calls" in result.stdout
    assert_shown_not_obeyed(result.stdout)
