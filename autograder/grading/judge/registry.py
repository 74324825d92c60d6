"""The judge-side checks, by the name a test cell calls them: `check.sgd(...)` is judged by the function
registered here as "sgd".

A judged check registers itself where it is defined, as a student check does (`student/checks/registry.py`):
a generator `fn(rng, *args, **kwargs)` that yields requests for the kernel, receives their replies, and
returns a Verdict. The package `grading.judge` imports every module that registers one before it offers
the registry as `JUDGED_CHECKS`."""
from collections.abc import Callable, Generator
from typing import Any

from autograder.student.verdict import Verdict

# A judged check: given the secret rng and the test cell's arguments, it yields requests (JSON-ready dicts),
# is sent each one's reply (an untrusted JSON object), and returns the Verdict.
Judgement = Generator[dict[str, Any], dict[str, Any], Verdict]
JudgedCheck = Callable[..., Judgement]

JUDGED: dict[str, JudgedCheck] = {}


def judges(name: str) -> Callable[[JudgedCheck], JudgedCheck]:
    """Make the decorated generator the judge of `check.<name>`: `function(rng, *args, **kwargs)`."""
    def add(function: JudgedCheck) -> JudgedCheck:
        if name in JUDGED:
            raise ValueError(f"two judged checks are named {name!r}: {JUDGED[name].__module__} and {function.__module__}")
        JUDGED[name] = function
        return function
    return add
