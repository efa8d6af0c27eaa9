"""The README's layout lists every package and top-level module of ``otel_oracles/``, and
the numbers the example serve config quotes agree with ``docs/serve.md``."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "otel_oracles"


def _layout_block() -> str:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Layout", 1)[1]
    return section.split("```", 2)[1]


def test_readme_layout_names_every_package_and_module() -> None:
    block = _layout_block()
    listed = set(re.findall(r"^ +([a-z_]+(?:/|\.py))", block, flags=re.MULTILINE))
    present = {
        p.name + "/" if p.is_dir() else p.name
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.name != "__init__.py")
    }
    assert present - listed == set(), f"README layout misses {sorted(present - listed)}"
    assert listed - present == set(), f"README layout names what is gone {sorted(listed - present)}"


def test_example_serve_config_quotes_the_documented_memory_per_span() -> None:
    documented = re.search(
        r"max_buffered_spans` \u00d7 ([\d.]+) KB", (REPO / "docs/serve.md").read_text()
    )
    assert documented is not None
    example = (REPO / "examples" / "serve.yaml").read_text()
    line = next(x for x in example.splitlines() if x.strip().startswith("max_buffered_spans"))
    assert f"~{documented.group(1)} KB" in line, line
