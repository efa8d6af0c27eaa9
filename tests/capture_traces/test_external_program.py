"""``external_program.run_program`` fails a Go or Java capture in every case its drivers rely on.

The Go and Java capture drivers trust this one helper to notice a run that did not go as
scripted; a miss would let a capture through whose trace is not the scenario's. The program
here is a real process (a small Python script standing in for the Go binary or the JVM) that
reads the spec, asks the real scripted fake OpenAI server on 127.0.0.1 over HTTP, and reports
as the drivers' programs do: on its last stdout line or in the report file.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from external_program import FakeServer, Program, Run, Where, content_key, run_program
from fake_gemini import FakeGemini
from fake_openai import FakeOpenAI
from scenarios import SCENARIOS

SCENARIO = SCENARIOS["a_happy"]  # a tool call, then the answer: two model turns

AGENT = textwrap.dedent(
    """
    import json, sys, urllib.request
    spec = json.load(open(sys.argv[1]))
    asks, exit_code, report_to = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    messages = [{"role": "user", "content": spec["prompt"]}]
    text = None
    for _ in range(asks):
        request = urllib.request.Request(
            spec["baseURL"] + "/chat/completions",
            data=json.dumps({"model": "m", "messages": messages}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            text = json.load(reply)["choices"][0]["message"]["content"]
    report = json.dumps({"text": text, "executed": ["search_docs"], "spec": spec})
    if report_to:
        open(report_to, "w").write(report)
    print("log line")
    print("" if report_to else report)
    sys.exit(exit_code)
    """
)


def run_agent(
    tmp_path: Path, asks: int, exit_code: int = 0, report_file: bool = False, writes: bool = True
) -> Run:
    """``run_program`` on the stand-in agent, which asks the model ``asks`` times."""
    script = tmp_path / "agent.py"
    script.write_text(AGENT)

    def launch(where: Where) -> Program:
        report_to = str(where.report) if report_file and writes else ""
        command = [sys.executable, str(script), str(where.spec), str(asks), str(exit_code)]
        return Program({"baseURL": where.base_url}, [*command, report_to])

    return run_program(
        SCENARIO, SCENARIO, "a_happy", tmp_path, FakeOpenAI, launch, "agent", report_file
    )


@pytest.mark.parametrize("report_file", [False, True])
def test_a_run_as_scripted_returns_the_report_and_leaves_no_spec_or_report(
    tmp_path: Path, report_file: bool
) -> None:
    run = run_agent(tmp_path, asks=len(SCENARIO.turns), report_file=report_file)
    assert run.model_calls == len(SCENARIO.turns)
    assert run.report["text"] == SCENARIO.turns[-1]
    spec = run.report["spec"]
    assert (spec["system"], spec["prompt"], spec["agent"], spec["handoff"]) == (
        SCENARIO.system, SCENARIO.prompt, "support_agent", False
    )  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.py"]


@pytest.mark.parametrize("asks", [1, 3])
def test_a_model_asked_more_or_fewer_times_than_scripted_fails_the_capture(
    tmp_path: Path, asks: int
) -> None:
    with pytest.raises(SystemExit, match=f"asked {asks} times, not 2"):
        run_agent(tmp_path, asks=asks)


def test_a_program_that_exits_non_zero_fails_the_capture(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"agent failed \(3\)"):
        run_agent(tmp_path, asks=len(SCENARIO.turns), exit_code=3)


def test_a_program_that_writes_no_report_file_fails_the_capture(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"agent failed \(0\)"):
        run_agent(tmp_path, asks=len(SCENARIO.turns), report_file=True, writes=False)


def test_the_build_key_changes_with_any_file_the_build_reads(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    files = [tmp_path / "go.mod", tmp_path / "src" / "main.go"]
    for path in files:
        path.write_text("module capture\n")
    before = content_key(tmp_path, files)
    assert content_key(tmp_path, files) == before
    files[1].write_text("package main\n")
    assert content_key(tmp_path, files) != before


KILLED = SCENARIOS["z_killed_before_answer"]  # a_happy's turns, killed in model call 2

KILLED_AGENT = textwrap.dedent(
    """
    import json, sys, urllib.request
    spec = json.load(open(sys.argv[1]))
    for _ in range(int(sys.argv[2])):
        request = urllib.request.Request(
            spec["baseURL"] + sys.argv[3],
            data=json.dumps({"model": "m", "messages": [], "contents": []}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            json.load(reply)
        if spec.get("killed"):
            open(spec["journal"], "a").write("search_docs\\n")
    print(json.dumps({"text": "done", "executed": []}))
    """
)


FAKES: dict[str, tuple[FakeServer, str]] = {
    "openai": (FakeOpenAI, "/chat/completions"),
    "gemini": (FakeGemini, "/v1beta/models/gemini-2.5-flash:generateContent"),
}
"""The scripted model servers a killed Go or Java program is run against, and the path each
answers: ``fake_gemini.py`` (``adk-go``) kills as ``fake_openai.py`` does."""


def run_killed_agent(tmp_path: Path, asks: int, fake: str = "openai") -> Run:
    """``run_program`` on a ``z_killed_*`` scenario: the scripted server kills the program
    (``ScriptedServer.victim``) in the model call the scenario names."""
    script = tmp_path / "agent.py"
    script.write_text(KILLED_AGENT)
    server, path = FAKES[fake]

    def launch(where: Where) -> Program:
        command = [sys.executable, str(script), str(where.spec), str(asks), path]
        return Program({"baseURL": where.base_url}, command)

    return run_program(KILLED, KILLED, "z_killed", tmp_path, server, launch, "agent")


@pytest.mark.parametrize("fake", sorted(FAKES))
def test_a_killed_run_dies_in_the_scripted_call_and_reports_its_journal(
    tmp_path: Path, fake: str
) -> None:
    """The program, a process apart from the server, is SIGKILLed while its second model call
    is open (the server, and this test's process, live on); the tools it journalled before
    are what it executed, and it has no answer."""
    run = run_killed_agent(tmp_path, asks=len(KILLED.turns), fake=fake)
    assert run.model_calls == 2
    assert run.report == {"text": None, "executed": ["search_docs"]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.py"]


def test_a_killed_scenario_whose_program_was_not_killed_fails_the_capture(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"agent was not killed \(exit 0\)"):
        run_killed_agent(tmp_path, asks=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.py"]
