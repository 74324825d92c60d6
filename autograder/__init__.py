"""The babygrad course's own package: the checks that notebooks call, and the instructor commands."""

__version__ = "0.1.0"
