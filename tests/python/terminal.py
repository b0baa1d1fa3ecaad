"""Runs a command on a pseudo-terminal (so its stderr is a terminal) and prints what it wrote,
then `exit STATUS`. Used by the tests of the shell commands' progress display."""

import os
import pty
import select
import sys
import time

LIMIT_SECONDS = 60


def main() -> None:
    command = sys.argv[1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    output = b""
    deadline = time.time() + LIMIT_SECONDS
    status = None
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            output += data
            if data:
                continue
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(raw)
            break
    if status is None:
        os.kill(pid, 9)
        status = "timeout"
    sys.stdout.write(output.decode("utf-8", "replace"))
    sys.stdout.write(f"\nexit {status}\n")


main()
