"""What a check returns to a test cell: did it pass, and a message written for the learner."""
from dataclasses import dataclass


@dataclass
class Verdict:
    passed: bool
    message: str

    def __str__(self) -> str:
        return self.message


def passed(message: str) -> Verdict:
    return Verdict(True, message)


def failed(message: str) -> Verdict:
    return Verdict(False, message)
