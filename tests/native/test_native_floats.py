"""Floats the core writes as text are Python's own spelling (``repr``, and ``json.dumps`` for
JSON): a step's raw JSON and scan text, the parsers' Python-repr dumps and the JSON report all
use the one formatter. The shortest decimal that reads back is not always unique: when a
float lies exactly halfway between two of them (only 16- and 17-digit forms can), Python
takes the even digit; a formatter that took the other one wrote a different text for about
one such float in two."""

from __future__ import annotations

import json
import random
import struct

from otel_oracles import _native


def _halfway(rng: random.Random, count: int) -> list[float]:
    """Floats between 2**49 and 2**53 that are whole eighths: their exact value has one
    digit more than the shortest forms around them, often a final 5 (a tie)."""
    return [rng.randrange(2**52, 2**56) / 8 * rng.choice((1, -1)) for _ in range(count)]


def _any_bits(rng: random.Random, count: int) -> list[float]:
    """Doubles from random bit patterns (every exponent), NaN and infinities left out."""
    found: list[float] = []
    while len(found) < count:
        (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if x == x and abs(x) != float("inf"):
            found.append(x)
    return found


def test_floats_are_written_as_json_dumps_writes_them() -> None:
    rng = random.Random(20261205)
    floats = [*_halfway(rng, 20_000), *_any_bits(rng, 20_000), 0.1 + 0.2, 5e-324, -0.0, 1e16]
    differing = [
        x
        for x in floats
        if _native.raw_json({"x": x}) != json.dumps({"x": x}, ensure_ascii=False, sort_keys=True)
    ]
    assert differing == []
    # The halfway set does hold ties that a shortest-digits formatter can write either way.
    ties = [x for x in floats[:20_000] if len(repr(abs(x)).replace(".", "").lstrip("0")) >= 17]
    assert len(ties) > 1_000


def test_a_steps_scan_text_spells_floats_as_python() -> None:
    """The scan text writes a step's values the way pydantic's JSON does (``repr`` of each
    float); a tie spelled the other way would hide or invent a pattern's match."""
    rng = random.Random(7)
    for x in _halfway(rng, 2_000):
        text = _native.raw_json({"arguments": {"amount": x}})
        assert text is not None and repr(x) in text, (x, text)


def test_the_reports_spell_floats_as_python() -> None:
    """The JSON report's writers (``json_indented``, ``report_text``) against ``json.dumps``:
    ties and any bit pattern, short decimals, every power of two, and each side of the
    switches to exponent notation (below 1e-4, from 1e16), where the core's digits are laid
    out as Python lays them out."""
    rng = random.Random(38)
    floats = [*_halfway(rng, 5_000), *_any_bits(rng, 5_000)]
    floats += [float(f"{rng.randrange(10**17)}e{rng.randint(-30, 30)}") for _ in range(5_000)]
    floats += [2.0**e for e in range(-1074, 1024)]
    floats += [1e16, 9.999999999999998e15, 1e15, 1e-5, 1e-4, 9.999999999999999e-5, 1.5e-5, 0.0]
    floats += [-x for x in floats]
    assert _native.json_indented(floats, 0) == json.dumps(floats, indent=0)
    assert _native.report_text(floats) == json.dumps(floats, indent=2).encode()
