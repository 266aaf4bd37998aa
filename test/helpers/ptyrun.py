#!/usr/bin/env python3
# Runs a command on a pseudo-terminal, as a person at a terminal would: its stdout and stderr are a
# TTY. What it prints is copied to our stdout (as the terminal shows it, \r\n line ends). SIGINT or
# SIGTERM to us types Ctrl-C on that terminal (the line discipline sends SIGINT to the command's
# process group, as a key press would). Exits with the command's exit status (128+N for a signal).
import os
import pty
import select
import signal
import sys

def main():
    argv = sys.argv[1:]
    if not argv:
        sys.stderr.write("usage: ptyrun.py COMMAND [ARG...]\n")
        return 2
    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            sys.stderr.write(f"ptyrun.py: {argv[0]}: {e.strerror}\n")
            os._exit(127)
    ctrl_c = lambda *_: os.write(master, b"\x03")
    signal.signal(signal.SIGINT, ctrl_c)
    signal.signal(signal.SIGTERM, ctrl_c)
    out = sys.stdout.buffer
    while True:
        try:
            ready, _, _ = select.select([master], [], [], 0.5)
        except InterruptedError:
            continue
        if not ready:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the command and everything it started closed the terminal
            data = b""
        if not data:
            _, status = os.waitpid(pid, 0)
            break
        out.write(data)
        out.flush()
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)

if __name__ == "__main__":
    sys.exit(main())
