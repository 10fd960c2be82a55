"""Wall-clock jumps on a Canopy node: a library preloaded into the node (``clock_offset.c``) adds an offset, read from
a file of the node's own, to every reading of the wall clock (``CLOCK_REALTIME``, ``gettimeofday``, ``time``), and
leaves the monotonic clocks alone, as a step of a machine's clock does.

``WallClock(path)`` is one node's dial: ``environment()`` is what the node starts with, ``jump(seconds)`` moves its
clock (the node sees it within 0.1 s), ``restore()`` puts it back. The library is compiled from its source once
per source version, with the C compiler that comes with Swift (``clang``) or the system's ``cc``, into the system's
temporary directory. ``unavailable_reason()`` tells why it cannot be (no compiler, not Linux with glibc), so tests
skip with that reason.

NATS servers are Go programs, which read the clock without libc: their clocks cannot be moved this way, and the
nemesis jumps only Canopy nodes' clocks.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("clock_offset.c")
OFFSET_VARIABLE = "CANOPY_CLOCK_OFFSET_FILE"
COMPILE_TIMEOUT = 60.0


class ClockUnavailable(RuntimeError):
    """The library that moves a node's clock cannot be built here."""


def compiler() -> str | None:
    return shutil.which("clang") or shutil.which("cc")


@functools.cache
def library() -> Path:
    """The compiled library (built on first use, atomically, so concurrent runs share it)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        raise ClockUnavailable("moving a node's clock needs Linux with glibc (LD_PRELOAD of clock_offset.c)")
    tool = compiler()
    if tool is None:
        raise ClockUnavailable("no C compiler (clang or cc) to build clock_offset.c")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"canopy-clock-offset-{digest}.so"
    if target.exists():
        return target
    partial = target.with_suffix(f".{os.getpid()}.partial")
    try:
        done = subprocess.run([tool, "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-o", str(partial), str(SOURCE),
                               "-ldl"], capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ClockUnavailable(f"{tool} did not build clock_offset.c within {COMPILE_TIMEOUT:g} s") from None
    if done.returncode != 0:
        raise ClockUnavailable(f"{tool} could not build clock_offset.c: {done.stderr.strip()[:500]}")
    partial.replace(target)
    return target


def unavailable_reason() -> str | None:
    """Why clocks cannot be moved here, or None."""
    try:
        library()
    except ClockUnavailable as reason:
        return str(reason)
    return None


class WallClock:
    """One Canopy node's wall clock, moved through the file ``path`` (see the module's docstring)."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0.0
        self._write(0.0)

    def environment(self) -> dict[str, str]:
        """The variables the node must start with for its clock to follow this dial."""
        return {"LD_PRELOAD": str(library()), OFFSET_VARIABLE: str(self.path)}

    def jump(self, seconds: float) -> None:
        """Sets the node's clock ``seconds`` away from the real time (negative: back)."""
        self._write(seconds)

    def restore(self) -> None:
        self._write(0.0)

    def _write(self, seconds: float) -> None:
        partial = self.path.with_suffix(".partial")
        partial.write_text(f"{round(seconds * 1000)}\n")
        partial.replace(self.path)  # the node never reads a half-written offset
        self.offset = seconds
