"""The openai-java capture driver's own logic (tools/capture_traces/fw_openai_java.py): what
the Java loop hands the model for each scripted call, and how the versions EXPECTED.md lists
are read from the copied jars' names. The capture itself needs java and mvn (see
tools/capture_traces/README.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fw_openai_java import jar_version, tool_messages
from scenarios import SCENARIOS


def test_tool_messages_are_the_python_loops_in_call_order() -> None:
    """b_tool_retry: the first search fails, the second returns documents, as the Python
    openai-v2 loop sends them (``Tools.call``)."""
    first, second = tool_messages(SCENARIOS["b_tool_retry"])
    assert json.loads(first) == {
        "error": "SearchBackendError: upstream search service timed out (attempt 1)"
    }
    assert "documents" in json.loads(second)


def test_every_failure_is_an_error_message() -> None:
    messages = [json.loads(m) for m in tool_messages(SCENARIOS["c_retry_exhausted"])]
    assert len(messages) == 3 and all(set(m) == {"error"} for m in messages)


def test_jar_versions_with_a_versioned_name_and_a_qualifier() -> None:
    assert jar_version("opentelemetry-openai-java-1.1-2.31.1-alpha") == (
        "opentelemetry-openai-java-1.1",
        "2.31.1-alpha",
    )
    assert jar_version("openai-java-core-4.105.0") == ("openai-java-core", "4.105.0")
    assert jar_version("opentelemetry-sdk-trace-1.65.0") == ("opentelemetry-sdk-trace", "1.65.0")
    assert jar_version("annotations") is None
