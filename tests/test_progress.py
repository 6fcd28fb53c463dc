"""`indexbridge.cli.progress`: long CLI work shows a bar on a terminal's stderr and prints nothing
extra when piped. The terminal case runs the real command with stderr on a pseudo-terminal."""

from __future__ import annotations

import fcntl
import os
import re
import pty
import struct
import termios
import subprocess
import sys
from pathlib import Path


def _conformance(vectors_dir: Path) -> list[str]:
    return [str(Path(sys.executable).parent / "indexbridge"), "conformance", str(vectors_dir / "paimon"), "--engine", "python", "--only", "bloom,hash"]


def _cases(vectors_dir: Path) -> int:
    import json

    return sum(c["format"] in ("bloom", "hash") for c in json.loads((vectors_dir / "paimon" / "manifest.json").read_text())["cases"])


def test_piped_stderr_gets_no_progress(vectors_dir: Path) -> None:
    done = subprocess.run(_conformance(vectors_dir), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"{_cases(vectors_dir)} passed, 0 failed"
    assert done.stderr == ""


def test_terminal_stderr_gets_a_progress_bar(vectors_dir: Path) -> None:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a new pty is 0 columns wide
    try:
        done = subprocess.Popen(_conformance(vectors_dir), stdout=subprocess.PIPE, stderr=follower, text=True)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the pty closed: the command ended
                break
            if not chunk:
                break
            shown += chunk
        out, _ = done.communicate(timeout=300)
    finally:
        os.close(leader)
    assert done.returncode == 0
    n = _cases(vectors_dir)
    assert out.strip().splitlines()[-1] == f"{n} passed, 0 failed"  # stdout unchanged
    text = shown.decode("utf-8", "replace")
    assert re.search(rf"conformance \[python\]: +\d+%\|.*\| \d+/{n} ", text), text
