"""`grade`'s pydantic models take Python functions as default factories, not builtin types.

pydantic reads each factory's signature when it builds a model's schema; a builtin's is
parsed from its ``__text_signature__`` through ``tokenize`` and ``ast`` (~0.57 M instructions
a field, docs/performance-history.md "Start-up: pydantic's default factories"). The check runs in a
fresh interpreter so that only what ``grade`` itself builds is looked at.
"""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json, types
import otel_oracles.cli.grade
from otel_oracles.grade.registry import registered
from otel_oracles.mapping import config
from pydantic import BaseModel

registered()
found, seen, todo = [], 0, [BaseModel]
while todo:
    cls = todo.pop()
    todo.extend(cls.__subclasses__())
    if not cls.__module__.startswith("otel_oracles.") or not cls.__pydantic_complete__:
        continue
    seen += 1
    for name, info in cls.__pydantic_fields__.items():
        factory = info.default_factory
        if isinstance(factory, (type, types.BuiltinFunctionType)) and not issubclass(
            factory if isinstance(factory, type) else object, BaseModel
        ):
            found.append(f"{cls.__module__}.{cls.__qualname__}.{name}: {factory.__name__}")
print(json.dumps({"seen": seen, "found": sorted(found)}))
"""


def test_grade_models_use_python_default_factories() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    report = json.loads(out.stdout)
    assert report["seen"] >= 40, report  # the probe saw grade's models (contracts, results, ...)
    assert report["found"] == [], (
        "use otel_oracles.model.defaults.new_list / new_dict as default_factory: "
        + ", ".join(report["found"])
    )
