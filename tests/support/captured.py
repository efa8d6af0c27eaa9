"""The captured traces' trajectories, for tests that hold a core path to its Python reference
over every real source: each source's scenarios, with content and without, mapped as ``grade``
maps them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def captured_trajectories(scenarios: Iterable[str]) -> Iterator[tuple[str, Trajectory]]:
    """(``source/file``, trajectory) for each captured source's ``scenarios``, content on and
    off, the sources in name order; a scenario a source was not captured in is skipped."""
    conventions = load_conventions()
    for source in sorted(p for p in TRACES.iterdir() if p.is_dir()):
        for scenario in scenarios:
            for variant in ("", ".nocontent"):
                path = source / f"{scenario}{variant}.otlp.json"
                if not path.is_file():
                    continue
                problems: list[InputProblem] = []
                for trace in read_traces([str(path)], problems):
                    yield f"{source.name}/{path.name}", map_trace(trace, conventions)
