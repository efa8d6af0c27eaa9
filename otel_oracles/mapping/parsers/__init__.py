"""Named parsers that mapping files reference with ``parse:``, built-in and plug-in.

Declarative YAML cannot say "rebuild a chat message list from flattened indexed keys" or
"read a Python ``repr`` of a tool call", so each such transformation is a small function
registered under a name, and mapping files name it (``parse: [json, openinference_messages]``).
Built-ins sit one module per vendor or format, named after the mapping file that uses them
(``openinference.py`` for ``conventions/openinference.yaml``; ``scalars``, ``providers``
and ``messages`` are shared by many). A package adds its own through the
``otel_oracles.parsers`` entry-point group (see ``docs/conventions.md``, "Writing a parser
plug-in"); an unknown name is a load-time ``ConventionError`` naming file and key path.

Every message parser returns the one internal message shape, the OTel GenAI parts format
(semconv v1.37+ ``gen_ai.input.messages``); ``messages`` has the helpers that build it.
"""

from otel_oracles.mapping.parsers._registry import (
    BUILTIN_MODULES,
    ENTRY_POINT_GROUP,
    Parser,
    ParserRegistration,
    ParserRegistry,
    builtin_parsers,
    load_parsers,
)

__all__ = [
    "BUILTIN_MODULES",
    "ENTRY_POINT_GROUP",
    "Parser",
    "ParserRegistration",
    "ParserRegistry",
    "builtin_parsers",
    "load_parsers",
]
