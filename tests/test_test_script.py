"""``scripts/test.sh`` leaves a user's machine as it found it: it never kills a process by
name, and the Debian packages it installs start no service (a temporary policy-rc.d that it
removes again, and enabled units disabled). Checked by running its install helper for real
with a stand-in ``apt-get`` on ``PATH``."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "test.sh"


def test_nothing_is_killed_by_name() -> None:
    text = SCRIPT.read_text()
    assert not re.search(r"\b(pkill|killall)\b", text)
    assert "systemctl stop" not in text and "systemctl start" not in text


def test_apt_install_blocks_service_starts_and_cleans_up(tmp_path: Path) -> None:
    """The helper as the script defines it, with apt-get replaced by a recorder that notes
    whether a policy-rc.d denying service starts (exit 101) was in place during the install."""
    helper = SCRIPT.read_text()
    start = helper.index("apt_install() {")
    end = helper.index("\n}\n", start) + 3
    policy = tmp_path / "policy-rc.d"
    body = helper[start:end].replace("/usr/sbin/policy-rc.d", str(policy))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    apt = bindir / "apt-get"
    apt.write_text(
        "#!/bin/sh\n"
        f'[ "$1" = install ] || exit 0\n'
        f'"{policy}" x start >/dev/null 2>&1; echo "policy=$?" >> "{tmp_path}/log"\n'
    )
    apt.chmod(0o755)
    script = f"set -eu\n{body}\napt_install somepackage\n"
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    if os.getuid() != 0:
        assert proc.returncode != 0, "not root: the helper declines"
        return
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "log").read_text().strip() == "policy=101", "service starts denied"
    assert not policy.exists(), "its temporary policy-rc.d is removed again"
