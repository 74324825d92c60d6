"""The judge-side checks, by the name a test cell calls them: `check.sgd(...)` is judged by the function
registered here as "sgd".

A judged check registers itself where it is defined, as a student check does (`student/checks/registry.py`):
a generator `fn(rng, *args, **kwargs)` that yields requests for the kernel, receives their replies, and
returns a Verdict. The package `grading.judge` imports every module that registers one before it offers
the registry as `JUDGED_CHECKS`."""

JUDGED = {}


def judges(name):
    """Make the decorated generator the judge of `check.<name>`: `function(rng, *args, **kwargs)`."""
    def add(function):
        if name in JUDGED:
            raise ValueError(f"two judged checks are named {name!r}: {JUDGED[name].__module__} and {function.__module__}")
        JUDGED[name] = function
        return function
    return add
