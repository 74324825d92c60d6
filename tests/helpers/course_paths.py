"""Where the committed course is: the repository's root, found from this file, so tests run from any folder."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
