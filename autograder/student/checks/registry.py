"""The checks a notebook's test cells call, by name: `check.linear(...)` is looked up here.

A check registers itself where it is defined, with one calling convention: it receives the notebook's
namespace, then its own arguments, and returns a Verdict (never raises, never writes to stderr)."""
import difflib
from collections.abc import Callable

from autograder.student.verdict import Verdict

# A check: `function(namespace, *args, **kwargs) -> Verdict`, the namespace being the notebook's globals.
Check = Callable[..., Verdict]

CHECKS: dict[str, Check] = {}


def register(name: str) -> Callable[[Check], Check]:
    """Make the decorated function `check.<name>`: `function(namespace, *args, **kwargs) -> Verdict`."""
    def add(function: Check) -> Check:
        if name in CHECKS:
            raise ValueError(f"two checks are named {name!r}: {CHECKS[name].__module__} and {function.__module__}")
        CHECKS[name] = function
        return function
    return add


def unknown(name: str) -> str:
    """The message for a check name nobody registered, with the nearest registered one."""
    close = difflib.get_close_matches(name, CHECKS, n=1)
    return (f"the course has no check named {name!r}" + (f"; did you mean check.{close[0]}?" if close else "")
            + " (a later chapter's checks come with that chapter: update the course package)")
