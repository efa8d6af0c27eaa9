"""Contracts, conventions and serve configs load with bounded YAML: an alias bomb or an
oversized file is one clear error naming the file, never gigabytes of memory."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from otel_oracles.config_bytes import MAX_CONFIG_BYTES
from otel_oracles.config_yaml import MAX_EXPANDED_NODES, load_yaml
from otel_oracles.errors import ContractError, ConventionError
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.server.config import ConfigError, read_config_file

CLI = str(Path(sys.executable).with_name("otel-oracles"))


def alias_bomb(levels: int = 9) -> str:
    """Nine anchors of nine aliases: ~600 bytes standing for 9**9 leaves, inside the params
    of an ordinary check."""
    lines = [
        "id: bomb",
        "invariants:",
        "  - type: final_output",
        "    must_match: ok",
        "    why: &a0 [x, x, x, x, x, x, x, x, x]",
    ]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def limit_memory() -> None:
    # 1 GiB of address space: today's loaders die with MemoryError well before the bomb is
    # expanded, instead of taking the machine's memory.
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_validate_refuses_an_alias_bomb_with_one_line_naming_the_file(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb())
    assert bomb.stat().st_size < 1024
    done = subprocess.run(
        [CLI, "validate", str(bomb)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit_memory,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # validate: 1 = some file is invalid
    assert "Traceback" not in output
    assert f"error: {bomb}: " in output and "alias" in output


def test_load_contract_refuses_the_bomb_and_accepts_ordinary_aliases(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb())
    with pytest.raises(ContractError) as info:
        load_contract(bomb)
    assert info.value.source == str(bomb)
    assert f"more than {MAX_EXPANDED_NODES} nodes" in info.value.message
    shared = tmp_path / "shared.yaml"
    shared.write_text(
        "id: shared\ninvariants:\n"
        "  - {type: tool_called, tool: search, args_regex: &rx {query: refund}}\n"
        "  - {type: tool_called, tool: lookup, args_regex: *rx}\n"
    )
    contract = load_contract(shared)
    assert [spec.params["args_regex"] for _, spec in contract.checks()] == [
        {"query": "refund"},
        {"query": "refund"},
    ]


def test_an_oversized_contract_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("id: big\n# " + "x" * MAX_CONFIG_BYTES + "\n")
    with pytest.raises(ContractError) as info:
        load_contract(big)
    assert info.value.source == str(big)
    assert f"larger than {MAX_CONFIG_BYTES} bytes" in info.value.message


def test_a_convention_file_bomb_is_a_convention_error(tmp_path: Path) -> None:
    bomb = tmp_path / "mine.yaml"
    bomb.write_text(alias_bomb().replace("id: bomb", "name: mine"))
    with pytest.raises(ConventionError) as info:
        load_conventions([bomb])
    assert info.value.source == str(bomb)
    assert "alias" in info.value.message


def test_a_serve_config_bomb_is_a_config_error(tmp_path: Path) -> None:
    bomb = tmp_path / "serve.yaml"
    bomb.write_text(alias_bomb())
    with pytest.raises(ConfigError) as info:
        read_config_file(bomb)
    assert "alias" in str(info.value)


def test_a_self_containing_alias_is_refused() -> None:
    with pytest.raises(Exception, match="alias"):
        load_yaml("a: &x [1, *x]\n")


def test_an_integer_longer_than_python_reads_is_a_yaml_error_at_its_line(tmp_path: Path) -> None:
    """A decimal integer past ``sys.get_int_max_str_digits`` made PyYAML's constructor raise
    ``ValueError``: a traceback from ``grade`` and ``validate``. It is a YAML error naming the
    file, the line and the column, as any value YAML cannot make."""
    digits = sys.get_int_max_str_digits() + 1
    contract = tmp_path / "huge.yaml"
    contract.write_text(
        "id: huge\n"
        "version: 1\n"
        "invariants:\n"
        "  - type: max_tool_calls\n"
        f"    max: 1{'0' * (digits - 1)}\n"
    )
    done = subprocess.run(
        [CLI, "validate", str(contract)], capture_output=True, text=True, timeout=120
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert f"error: {contract}: invalid YAML at line 5 column 10: " in output, output
    assert f"an integer of {digits} digits" in output
    with pytest.raises(ContractError, match="line 5 column 10"):
        load_contract(contract)


def test_integers_python_reads_whatever_their_length_still_load() -> None:
    limit = sys.get_int_max_str_digits()
    hexadecimal = "0x" + "f" * (limit + 10)
    assert load_yaml(f"a: {hexadecimal}\nb: -1_000\nc: {'9' * limit}\n") == {
        "a": int(hexadecimal, 16),
        "b": -1000,
        "c": int("9" * limit),
    }
