"""A chapter's support files (earlier_chapters.py, data), fetched when a notebook is opened alone.

Colab opens one notebook from the repository, without the folder around it. The set-up cell then
downloads the files the chapter needs from the release folder of the course's tag. Where they are
already present (a clone, Binder, grading) nothing happens and nothing is printed.
"""
import importlib
import os
import urllib.request
from pathlib import Path

BASE_URL_VARIABLE = "BABYGRAD_SUPPORT_URL"   # overrides the base URL (tests serve release/<chapter>/ locally)


def fetch_support_files(names, base_url, folder="."):
    """Download each of `names` that is missing from `folder`, from `base_url` (or $BABYGRAD_SUPPORT_URL)."""
    base = os.environ.get(BASE_URL_VARIABLE) or base_url
    fetched = []
    for name in names:
        target = Path(folder) / name
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        url = base.rstrip("/") + "/" + name
        with urllib.request.urlopen(url, timeout=60) as response:
            target.write_bytes(response.read())
        fetched.append(name)
    if fetched:
        importlib.invalidate_caches()      # so `from earlier_chapters import *` sees the new file
        print(f"Downloaded {', '.join(fetched)} from {base}")
    return fetched
