"""Settings of the command sandbox: how commands from untrusted traces may run, and the
limits they run under. Every default is here, with its reason."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CommandMode = Literal["sandbox", "unsafe", "off"]
"""``sandbox``: run inside the bubblewrap sandbox, or give ``error`` when it is unavailable;
``unsafe`` (``--unsafe-run-commands``): in the sandbox when it works here, else directly on
the host, still with the limits, the minimal environment and the output cap; ``off``: never
run, every command-running check gives ``error``."""

DEFAULT_MEMORY_BYTES = 2 * 1024**3
"""Address space per process (RLIMIT_AS): pytest with a few plug-ins needs a few hundred
MiB of mappings; 2 GiB leaves room and still stops a runaway allocation."""
DEFAULT_FILE_SIZE_BYTES = 256 * 1024**2
"""Largest file a command may write (RLIMIT_FSIZE)."""
DEFAULT_PROCESSES = 256
"""Processes per sandbox (RLIMIT_NPROC, counted for the sandbox's own host uid; a root
grader's commands run as an unused uid for this, docs/security.md)."""
DEFAULT_OUTPUT_BYTES = 64 * 1024
"""Bytes kept of each of stdout and stderr at the start, and again at the end; the middle is
counted, not kept."""
DEFAULT_TMP_BYTES = 256 * 1024**2
"""Size of the sandbox's private ``/tmp`` (a tmpfs that disappears with the sandbox)."""


class SandboxLimits(BaseModel):
    """Resource limits applied to every command a check runs, sandboxed or not."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_bytes: int = Field(default=DEFAULT_MEMORY_BYTES, gt=0)
    """Address space per process (RLIMIT_AS)."""
    file_size_bytes: int = Field(default=DEFAULT_FILE_SIZE_BYTES, gt=0)
    """Largest file a process may write (RLIMIT_FSIZE)."""
    processes: int = Field(default=DEFAULT_PROCESSES, gt=0)
    """Processes per user (RLIMIT_NPROC)."""
    output_bytes: int = Field(default=DEFAULT_OUTPUT_BYTES, gt=0)
    """Bytes kept from the start and from the end of stdout and of stderr each."""
    tmp_bytes: int = Field(default=DEFAULT_TMP_BYTES, gt=0)
    """Size of the sandbox's private /tmp."""


class CommandPolicy(BaseModel):
    """Whether and how checks that execute commands (``OracleCheck.runs_commands``) run.

    Contracts are trusted configuration, traces are not: a command from a contract runs
    over files a trace wrote, so it runs sandboxed unless the operator says otherwise.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: CommandMode = "sandbox"
    """sandbox, unsafe or off (see ``CommandMode``)."""
    off_reason: str = "command-running checks are turned off"
    """The message an ``off`` policy gives, naming the setting that turns them on."""
    limits: SandboxLimits = SandboxLimits()
    """Limits for every command, sandboxed or not."""


SANDBOXED = CommandPolicy()
"""The default everywhere: commands run in the sandbox or not at all."""
UNSAFE = CommandPolicy(mode="unsafe")
"""What ``--unsafe-run-commands`` selects."""
