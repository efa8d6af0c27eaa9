"""The core's walks of a dict's lent pairs (``pydict::lent_pairs``: no reference taken per
key and value) when Python code runs during the walk and changes the dict: a ``str``
subclass's ``__eq__``, or a callback the collector runs on an allocation inside a C call
(the exception that tells a key with lone surrogates is no UTF-8 is one). A pair freed so
must never be read: the walk holds what it reads across such a call, makes none, or
refuses the dict as iterating it in Python refuses it (``RuntimeError``).

Each case runs in a child interpreter: where the walk read a freed pair, the child crashed
(a key or value of 200 kB, which glibc maps alone with ``MALLOC_MMAP_THRESHOLD_`` below, is
unmapped when freed, so reading it faults)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

from otel_oracles._native import SourceScan, cut_length

REPO = Path(__file__).resolve().parents[2]

CHILD_HEAD = """
import gc

def big(text):
    return text * (100_000 // len(text))
"""


def run_child(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", CHILD_HEAD + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_a_key_compared_by_code_that_empties_the_attributes_is_refused() -> None:
    """A rule's key that is a ``str`` subclass is compared by its own ``__eq__``: one that
    empties the span's attributes frees the value being read (rc -11 before)."""
    child = run_child(
        """
        from types import SimpleNamespace
        from otel_oracles._native import SourceScan, cut_length

        attributes = {"k": big("a long text ")}

        class Emptying(str):
            __hash__ = str.__hash__

            def __eq__(self, other):
                attributes.clear()
                return str.__eq__(self, other)

        scan = SourceScan(frozenset({Emptying("k")}), [], [])
        span = SimpleNamespace(attributes=attributes, events=[])
        rule = SimpleNamespace(source_scan=scan)
        draft = SimpleNamespace(span=span, synthesized=False, rule=rule)
        try:
            cut_length([draft], 3, 16)
        except RuntimeError as err:
            print("refused:", err)
        """
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout == "refused: dictionary changed size during iteration\n"


COLLECTING = """
from types import SimpleNamespace
from otel_oracles._native import SourceScan, cut_length

keep = []
armed = []


class Span:
    events = []

    def __init__(self, attributes):
        self._attributes = attributes

    @property
    def attributes(self):
        # The collector one allocation short of a run when the core walks them.
        while gc.get_count()[0] < 1:
            keep.append([])
        armed.append(True)
        return self._attributes


def cut_emptying(attributes, emptied, scan):
    # cut_length of one span read by `scan`, `emptied` cleared by the first collection
    # after the core has the span's attributes.
    def empty(phase, info):
        if phase == "start" and armed:
            emptied.clear()

    rule = SimpleNamespace(source_scan=scan)
    draft = SimpleNamespace(span=Span(attributes), synthesized=False, rule=rule)
    gc.callbacks.append(empty)
    gc.set_threshold(1)
    try:
        return cut_length([draft], 1, 16)
    except RuntimeError as err:
        return f"refused: {err}"
"""


def test_a_key_with_lone_surrogates_emptied_by_a_collection_is_never_read_freed() -> None:
    """A key with lone surrogates under a rule's prefix: telling it is no UTF-8 made an
    exception, on which the collector ran a callback emptying the attributes; the key was
    then freed with the exception and asked ``startswith`` (rc -11 before). The prefix is
    now tested by ``str``'s own C test, which makes no object (no collection)."""
    child = run_child(
        COLLECTING
        + """
attributes = {big("\\ud800 key "): "a text of twenty chars"}
print(cut_emptying(attributes, attributes, SourceScan(frozenset(), ["\\ud800"], [])))
"""
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout == "22\n"


def test_a_nested_text_with_lone_surrogates_emptied_by_a_collection_is_never_read_freed() -> None:
    """A text with lone surrogates in a dict nested in a read attribute: telling it is no
    UTF-8 made an exception, on which the collector ran a callback emptying that dict. The
    text was then read while only the exception still held it, and the change went
    unnoticed (an answer of 100000, from a text no longer in the dict). It is now read again
    from the dict, held, which refuses a dict whose keys changed, as Python's iteration does
    (a walk that met the collection before reading the dict finds it empty: no cut)."""
    child = run_child(
        COLLECTING
        + """
inner = {"t": big("\\ud800 a spaced text ")}
print(cut_emptying({"k": inner}, inner, SourceScan(frozenset({"k"}), [], [])))
"""
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout in ("refused: dictionary keys changed during iteration\n", "None\n")


class Key(str):
    """A ``str`` subclass of a rule's keys: looked up by its own hash and comparison."""

    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)


def test_a_rule_whose_keys_compare_by_their_own_code_reads_as_python() -> None:
    span = SimpleNamespace(
        attributes={"k": "a text of twenty chars", "j": "a text of twenty-one c", "o": "x" * 3},
        events=[],
    )
    for keys in (frozenset({Key("k"), "j"}), frozenset({"k", "j"})):
        rule = SimpleNamespace(source_scan=SourceScan(keys, [], []))
        draft = SimpleNamespace(span=span, synthesized=False, rule=rule)
        assert cut_length([draft], 1, 16) == 22
        assert cut_length([draft], 3, 16) is None
