"""Report renderers shared by every command that produces a ``RunReport`` (``run``, ``gate``,
``grade``): a console table, JSON, JUnit XML and a self-contained HTML page.

Renderers are pure functions of the report: they never print, never exit and never look at
where the verdicts came from (AgentBench trajectory or OTel trace), so every command renders
the same way.
"""

from otel_oracles.report._console import render_console
from otel_oracles.report._html import render_html
from otel_oracles.report._json import render_json, report_data
from otel_oracles.report._junit import render_junit

__all__ = ["render_console", "render_html", "render_json", "render_junit", "report_data"]
