"""Grading agent traces inside pytest (docs/pytest.md).

``otel_oracles.testing.plugin`` is the pytest plug-in, registered through the ``pytest11``
entry point: ``pytest --oo-contracts DIR --oo-traces PATH`` turns every graded (contract,
trace) pair into a test item, and the ``grade_trace`` fixture grades what a test's agent
recorded with the OpenTelemetry SDK. The plug-in module imports nothing of the grading
stages until one of the two is used.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otel_oracles.testing._result import GradeResult


def __getattr__(name: str) -> Any:
    """``GradeResult`` (for type hints on what ``grade_trace`` returns), imported on first
    use: importing this package is what pytest does at every start-up."""
    if name == "GradeResult":
        from otel_oracles.testing._result import GradeResult

        return GradeResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["GradeResult"]
