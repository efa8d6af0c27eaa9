"""Grading agent traces inside pytest (docs/pytest.md).

``otel_oracles.testing.plugin`` is the pytest plug-in, registered through the ``pytest11``
entry point: ``pytest --oo-contracts DIR --oo-traces PATH`` turns every graded (contract,
trace) pair into a test item, and the ``grade_trace`` fixture grades what a test's agent
recorded with the OpenTelemetry SDK; ``http_faults`` and ``tool_faults`` make its
dependencies fail realistically meanwhile. The plug-in module imports nothing of the grading
stages until one of them is used.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otel_oracles.testing._faults import FaultUsageError, RateLimited
    from otel_oracles.testing._http_faults import HttpFaultServer
    from otel_oracles.testing._result import GradeResult
    from otel_oracles.testing._tool_faults import ToolFaults

_LAZY = {
    "FaultUsageError": "otel_oracles.testing._faults",
    "GradeResult": "otel_oracles.testing._result",
    "HttpFaultServer": "otel_oracles.testing._http_faults",
    "RateLimited": "otel_oracles.testing._faults",
    "ToolFaults": "otel_oracles.testing._tool_faults",
}


def __getattr__(name: str) -> Any:
    """The public names (type hints for what the fixtures give, the exceptions a test may
    catch), each imported on first use: importing this package is what pytest does at
    every start-up."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["FaultUsageError", "GradeResult", "HttpFaultServer", "RateLimited", "ToolFaults"]
