"""Run one command and measure its process tree from here, a small process.

On Linux a process's peak RSS (``ru_maxrss``) starts at its parent's RSS when the parent
started it: the high-water mark is carried through fork and exec. A benchmark driver that
has grown (imports, data sets, parsed reports of earlier jobs) would floor every job's peak
at its own size, so ``run_goals.run_process`` starts each job through this launcher, a bare
interpreter of a few MB: the job's figures are then its own.

Usage: python -I -S bench/spawn.py FIGURES.json CMD [ARG...]

Runs CMD with this process's environment, standard streams and process group, waits for it,
writes ``{"cpu_s", "wall_s", "maxrss_kb"}`` of CMD's tree (``wait4``: CMD and the children it
reaped) to FIGURES.json and exits with CMD's exit code.
"""

import json
import os
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    figures, cmd = argv[0], argv[1:]
    t0 = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    with open(figures, "w") as f:
        json.dump(
            {
                "cpu_s": usage.ru_utime + usage.ru_stime,
                "wall_s": wall,
                "maxrss_kb": usage.ru_maxrss,
            },
            f,
        )
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
