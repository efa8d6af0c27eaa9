"""The installed distributions' entry points, read once per process.

``importlib.metadata.entry_points`` reads and parses the metadata of every installed
distribution on each call, whatever the group asked for (~12 M instructions with the 68
distributions of the development environment). The oracle registry and the parser registry
each look for their plug-ins once a ``grade``; they now share one read
(docs/performance-history.md, "Start-up: one entry-point scan, field annotations as
objects"). A distribution installed while a process runs is seen by the next process, as a
plug-in module imported by an earlier look-up always was.
"""

from __future__ import annotations

import functools
import sys
from importlib.metadata import EntryPoints, entry_points

if sys.version_info >= (3, 12):

    @functools.cache
    def _installed() -> EntryPoints:
        return entry_points()

else:
    from importlib.metadata import SelectableGroups

    @functools.cache
    def _installed() -> SelectableGroups:
        # 3.11 answers a call without a selection by every group (``select`` as below).
        return entry_points()


def entry_point_group(group: str) -> EntryPoints:
    """The entry points of ``group``, in the order ``entry_points(group=group)`` gives them."""
    return _installed().select(group=group)
