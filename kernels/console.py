"""What the console scripts (``graphkit``, ``precond``) share: one exit-status convention
and one way to report.

- Usage errors (bad options or values) print one line, ``prog: error: message``, and exit
  with status 2.
- Failures while running (unreadable input, an impossible request) print one line and exit
  with status 1; no traceback unless ``GPUFOREST_TRACEBACK=1`` is set.
- Ctrl-C prints ``prog: interrupted`` and exits with 130 (128 + SIGINT), as shells do.
- A closed output pipe (``graphkit tw g.gr | head -1``) ends the command quietly with 141
  (128 + SIGPIPE), as ``cat`` and other Unix tools do.
- Progress bars go to stderr, only on a terminal, after half a second, never with
  ``--quiet``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

__all__ = ["ArgumentParser", "run_command", "progress", "search_progress", "positive_int", "non_negative", "EXIT_USAGE", "EXIT_FAILURE",
           "EXIT_INTERRUPTED"]

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one line on stderr (exit 2).

    Subparsers made by :meth:`add_subparsers` are of this class too.

    Examples
    --------
    >>> p = ArgumentParser(prog="demo")
    >>> _ = p.add_argument("--n", type=int)
    >>> try:
    ...     p.parse_args(["--n", "x"])
    ... except SystemExit as exc:
    ...     exc.code
    2
    """

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    """argparse ``type``: an integer >= 1 (else a usage error naming the value).

    Examples
    --------
    >>> positive_int("3")
    3
    """
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def non_negative(kind):
    """argparse ``type``: a number of type ``kind`` (``int``, ``float``) that is >= 0; NaN
    is refused too.

    Examples
    --------
    >>> non_negative(float)("0.5")
    0.5
    """
    def parse(text):
        value = kind(text)
        if not value >= 0:  # NaN too
            raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def _one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else ""


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush into a closed pipe
    raises nothing (the recipe of Python's signal documentation)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass


def run_command(prog: str, func, *args) -> int:
    """Run ``func(*args)`` as the body of console command ``prog``; returns its exit status.

    ``func``'s own status is returned as is. ``ValueError``, ``OSError``, ``RuntimeError``,
    ``TypeError`` and ``MemoryError`` become one line on stderr and status 1, any other
    exception too (named as an internal error); Ctrl-C gives 130 and a closed stdout 141.

    Examples
    --------
    >>> def body():
    ...     raise ValueError("g.gr:3: bad edge line")
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     status = run_command("graphkit stats", body)
    >>> status, err.getvalue()
    (1, 'graphkit stats: error: g.gr:3: bad edge line\\n')
    """
    try:
        status = func(*args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at exit
        return status
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except MemoryError as exc:
        if os.environ.get("GPUFOREST_TRACEBACK"):
            raise
        detail = _one_line(exc)
        print(f"{prog}: error: out of memory{': ' + detail if detail else ''}", file=sys.stderr)
        return EXIT_FAILURE
    except (ValueError, OSError, RuntimeError, TypeError) as exc:
        if os.environ.get("GPUFOREST_TRACEBACK"):
            raise
        print(f"{prog}: error: {_one_line(exc) or type(exc).__name__}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as exc:  # noqa: BLE001 - a bug still ends in one line; the variable shows the traceback
        if os.environ.get("GPUFOREST_TRACEBACK"):
            raise
        print(f"{prog}: internal error: {type(exc).__name__}: {_one_line(exc)} "
              "(GPUFOREST_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return EXIT_FAILURE


def progress(total=None, desc: str = "", quiet: bool = False, unit: str = "it"):
    """A tqdm progress bar on stderr: off with ``quiet``, and (``disable=None``) when stderr
    is not a terminal; it appears only after half a second, so short runs print nothing.

    Examples
    --------
    >>> with progress(10, "demo", quiet=True) as bar:
    ...     bar.update(10)
    """
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=True if quiet else None, delay=0.5,
                leave=False, dynamic_ncols=True)


def search_progress(wanted, desc, postfix, throttle_callable=True):
    """``(report, bar)`` for a search that reports dicts with a ``"nodes"`` count.

    ``wanted``: ``None`` / ``False`` (``report`` is ``None``), ``True`` (a :func:`progress`
    bar whose count is the nodes and whose postfix shows ``postfix = {label: key}`` of each
    dict, updated twice a second at most; close ``bar`` when done) or a callable, which
    gets the dicts (twice a second at most with ``throttle_callable``).

    Examples
    --------
    >>> seen = []
    >>> report, bar = search_progress(seen.append, "demo", {"best": "best"})
    >>> report({"nodes": 1024, "best": 3}); report({"nodes": 2048, "best": 4}); seen, bar
    ([{'nodes': 1024, 'best': 3}], None)
    """
    if wanted is None or wanted is False:
        return None, None
    if callable(wanted) and not throttle_callable:
        return wanted, None
    bar = None if callable(wanted) else progress(None, desc, unit=" nodes")
    last = [-1.0]

    def report(info):
        now = time.perf_counter()
        if now - last[0] < 0.5:
            return
        last[0] = now
        if bar is None:
            wanted(info)
            return
        bar.n = info["nodes"]
        bar.set_postfix({label: info[key] for label, key in postfix.items()}, refresh=False)
        bar.refresh()

    return report, bar
