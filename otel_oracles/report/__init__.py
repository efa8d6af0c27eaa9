"""Report renderers shared by every command that produces a ``RunReport`` (``run``, ``gate``,
``grade``): a console table, JSON, JUnit XML and a self-contained HTML page.

Renderers are pure functions of the report: they never print, never exit and never look at
where the verdicts came from (AgentBench trajectory or OTel trace), so every command renders
the same way. Each has a streaming writer underneath (``add`` one verdict at a time, then
read the document in chunks) so ``grade`` can report on any number of traces without
holding their verdicts; ``render_*`` feed a whole report through the same writers, so both
ways produce the same bytes.

The JUnit and HTML writers are imported on first use: a run that asks for neither (most of
them) does not load them and the HTML template.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_oracles._lazy_names import lazy_names
from otel_oracles._native import ShownFilter
from otel_oracles.report._common import Tally, json_safe, terminal_safe
from otel_oracles.report._console import ConsoleWriter, render_console
from otel_oracles.report._json import JsonWriter, render_json, report_data, verdict_reports

if TYPE_CHECKING:
    from otel_oracles.report._html import HtmlWriter, render_html
    from otel_oracles.report._junit import JUnitWriter, render_junit

_LAZY: dict[str, str] = {
    "HtmlWriter": "otel_oracles.report._html",
    "render_html": "otel_oracles.report._html",
    "JUnitWriter": "otel_oracles.report._junit",
    "render_junit": "otel_oracles.report._junit",
}
"""Public name -> the module it comes from, imported when the name is first read."""


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "ConsoleWriter",
    "HtmlWriter",
    "JUnitWriter",
    "JsonWriter",
    "ShownFilter",
    "Tally",
    "json_safe",
    "render_console",
    "render_html",
    "render_json",
    "render_junit",
    "report_data",
    "terminal_safe",
    "verdict_reports",
]
