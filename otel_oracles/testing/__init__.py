"""Grading agent traces inside pytest (docs/pytest.md).

``otel_oracles.testing.plugin`` is the pytest plug-in, registered through the ``pytest11``
entry point: ``pytest --oo-contracts DIR --oo-traces PATH`` turns every graded (contract,
trace) pair into a test item, and the ``grade_trace`` fixture grades what a test's agent
recorded with the OpenTelemetry SDK; ``http_faults`` and ``tool_faults`` make its
dependencies fail realistically meanwhile. The plug-in module imports nothing of the grading
stages until one of them is used.
"""

from typing import TYPE_CHECKING

from otel_oracles._lazy_names import lazy_names

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


__getattr__ = lazy_names(__name__, _LAZY)
"""The public names (type hints for what the fixtures give, the exceptions a test may
catch), each imported on first use: importing this package is what pytest does at every
start-up."""


__all__ = ["FaultUsageError", "GradeResult", "HttpFaultServer", "RateLimited", "ToolFaults"]
