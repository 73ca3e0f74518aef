"""The time limit of one problem's extraction, and the progress notes while it runs.

A problem file's code runs during extraction (Model(*get_init_inputs()), get_inputs(), forward),
and a get_inputs() that never returns used to keep `ucutlass extract` silent for ten minutes. Under
``deadline(path, limit_s)``:

- after ``note_after_s`` (5 s) and then every ``note_every_s`` (30 s) a note goes to stderr:
  ``<path>: note: still extracting after 5 s, in get_inputs() at line 14 (limit 120 s)``
  (the innermost frame of the problem file the main thread is in). `ucutlass` shows these lines as
  they come (src/eval/sol_link.cpp) and keeps them out of error messages;
- at ``limit_s`` a SIGALRM raises :class:`ExtractTimeout` in the main thread, naming where it
  stopped. It is a BaseException, so neither the problem's `except Exception` nor the fast tracer's
  fallback to torch.export (which would run the problem again) catches it;
- code that does not return to the interpreter (a long C call) cannot take the exception: at
  ``limit_s + grace_s`` (grace: the limit, at most 15 s) a watchdog thread prints the same error
  and ends the process (exit 1). A C call that also holds the GIL stops that thread too; for it,
  faulthandler dumps the stacks and ends the process at ``limit_s + 2 * grace_s``.

The limit is per problem: ``--timeout`` or $UCUTLASS_EXTRACT_TIMEOUT (seconds), default 120.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
import threading
import time
import types
from typing import Iterator, Optional, Tuple

DEFAULT_S = 120.0
ENV = "UCUTLASS_EXTRACT_TIMEOUT"
NOTE = "note: still extracting after"   # what src/eval/sol_link.cpp recognises as a progress note


class ExtractTimeout(BaseException):
    """The problem's extraction ran past its limit; str() is the finished diagnostic."""


def limit_from_env() -> float:
    """$UCUTLASS_EXTRACT_TIMEOUT in seconds, else DEFAULT_S. Raises ValueError when it is not a
    positive number."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return DEFAULT_S
    try:
        v = float(text)
    except ValueError:
        v = -1
    if not v > 0:
        raise ValueError(f"{ENV}={text!r} is not a positive number of seconds")
    return v


def _where(frame: Optional[types.FrameType], path: str) -> Tuple[int, str]:
    """(line, function) of the innermost frame of ``frame``'s stack in the problem file, or (0, "")."""
    real = os.path.realpath(path)
    while frame is not None:
        f = frame.f_code.co_filename
        if f == path or os.path.realpath(f) == real:
            return frame.f_lineno, frame.f_code.co_qualname
        frame = frame.f_back
    return 0, ""


def _in(line: int, fn: str) -> str:
    if not line:
        return ""
    return f", in {fn}() at line {line}" if fn != "<module>" else f", at line {line}"


def _timeout_text(path: str, limit_s: float, line: int, fn: str) -> str:
    where = f"{path}:{line}" if line else path
    named = bool(line) and fn != "<module>"
    return (f"{where}: error: extraction did not finish within {limit_s:g} s"
            + (f" (stopped in {fn}())" if named else "") + "\n"
            + f"hint: make {fn + '()' if named else 'the problem code'} finish on a CPU (a loop that never ends?), "
            f"or allow more time: ucutlass extract --timeout SECONDS, or {ENV}=SECONDS")


@contextlib.contextmanager
def deadline(path: str, limit_s: float, note_after_s: float = 5.0, note_every_s: float = 30.0,
             grace_s: Optional[float] = None) -> Iterator[None]:
    """Runs the body under the limit (module docstring). ``grace_s``: min(limit, 15 s) by default."""
    grace_s = min(limit_s, 15.0) if grace_s is None else grace_s
    main = threading.main_thread()
    done = threading.Event()
    t0 = time.monotonic()

    def main_frame():
        return sys._current_frames().get(main.ident)

    def watch():
        next_note = note_after_s
        while True:
            wait = min(next_note, limit_s + grace_s) - (time.monotonic() - t0)
            if done.wait(max(wait, 0)):
                return
            elapsed = time.monotonic() - t0
            line, fn = _where(main_frame(), path)
            if elapsed >= limit_s + grace_s:
                sys.stderr.write(_timeout_text(path, limit_s, line, fn) + "\n")
                sys.stderr.flush()
                os._exit(1)
            if elapsed >= next_note and elapsed < limit_s:
                sys.stderr.write(f"{path}: {NOTE} {elapsed:.0f} s{_in(line, fn)} "
                                 f"(limit {limit_s:g} s)\n")
                sys.stderr.flush()
                next_note += note_every_s
            elif elapsed >= limit_s:
                next_note = limit_s + grace_s

    def on_alarm(signum, frame):
        line, fn = _where(frame, path)
        signal.setitimer(signal.ITIMER_REAL, 1.0)  # again, should this raise land where it is ignored
        raise ExtractTimeout(_timeout_text(path, limit_s, line, fn))

    watcher = threading.Thread(target=watch, name="ucutlass-extract-deadline", daemon=True)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    faulthandler.dump_traceback_later(limit_s + 2 * grace_s, exit=True, file=2)
    watcher.start()
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        done.set()
        watcher.join()
