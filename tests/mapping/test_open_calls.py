"""``OpenCalls``: the open calls of a conversation history answer each result in amortized
constant time, with the same answers as a plain scan of the open calls in call order.

A history is trace content: one model call may carry tens of thousands of calls and results
whose ids match nothing, and a scan per result (as the first version did) made grading such a
trace quadratic, or cubic where the open calls were rebuilt per result."""

from __future__ import annotations

import random
from typing import Any

from otel_oracles.model.tool_name import OpenCalls
from tests.support.cpu_cost import cpu_seconds


def _plain_twin(response_id: str, pending: dict[str, Any]) -> str | None:
    """The definition: the earliest open call whose tool name and id are ``<tool>`` and
    ``<tool>_<n>`` where the result's id is ``<tool>_<m>``."""
    stem, sep, number = response_id.rpartition("_")
    if not (sep and stem and number.isdigit()):
        return None
    for call_id, name in pending.items():
        c_stem, c_sep, c_number = call_id.rpartition("_")
        if name == stem and c_sep and c_stem == stem and c_number.isdigit():
            return call_id
    return None


def test_answers_are_those_of_a_plain_scan() -> None:
    rng = random.Random(11)
    names = ["search_docs", "fetch", "a_b", None, ""]
    for _ in range(400):
        fast = OpenCalls()
        plain: dict[str, Any] = {}
        for _ in range(rng.randint(0, 30)):
            name = rng.choice(names)
            number = rng.randint(0, 4)
            if rng.random() < 0.45:
                call_id = rng.choice([f"{name}_{number}", f"call_{number}", f"a_b_{number}"])
                fast.open(call_id, name)
                plain[call_id] = name
            else:
                response_id = rng.choice([f"{name}_{number}", f"call_{number}", f"x{number}"])
                if response_id in plain:
                    assert response_id in fast
                    answered: str | None = response_id
                else:
                    assert response_id not in fast
                    answered = _plain_twin(response_id, plain)
                    assert fast.twin(response_id) == answered, (response_id, plain)
                if answered is not None:
                    fast.close(answered)
                    plain.pop(answered, None)
            assert bool(fast) == bool(plain)
            if plain:
                assert fast.first() == next(iter(plain))


def _unmatched_results(n: int) -> None:
    """Open ``n`` calls and look up ``n`` numbered results none answers."""
    pending = OpenCalls()
    for i in range(n):
        pending.open(f"c{i}", "t")
    for i in range(n):
        assert pending.twin(f"t_{i}") is None


def test_lookup_cost_grows_with_the_results_not_their_square() -> None:
    """8x the results: linear costs ~8x, quadratic 64x; the bound leaves room for noise."""
    costs = [cpu_seconds(lambda n=n: _unmatched_results(n)) for n in (2_000, 16_000)]
    assert costs[1] < 24 * costs[0], costs
