"""Where the course's MNIST files are: a copy the student put on disk, else the one the course ships.

Both are the four standard IDX files. The course ships all of MNIST (autograder/student/data/mnist/, see
data/README.md), so nothing is downloaded; a student can point the course at another copy in the
same format (Fashion-MNIST, say) with $BABYGRAD_MNIST_DIR or ~/.babygrad/mnist.
"""
import os
from pathlib import Path

EMBEDDED_DIR = Path(__file__).resolve().parent / "data" / "mnist"
ENV_VAR = "BABYGRAD_MNIST_DIR"
HOME_DIR = Path("~/.babygrad/mnist")
NAMES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
         "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def _find(folder, stem):
    """`stem.gz` or plain `stem` inside `folder`, or None."""
    for name in (stem + ".gz", stem):
        if (folder / name).is_file():
            return folder / name
    return None


def mnist_dir():
    """The first folder that holds all four files: $BABYGRAD_MNIST_DIR, ~/.babygrad/mnist, the embedded copy."""
    candidates = [Path(os.environ[ENV_VAR]).expanduser()] if os.environ.get(ENV_VAR) else []
    candidates += [HOME_DIR.expanduser(), EMBEDDED_DIR]
    for folder in candidates:
        if all(_find(folder, stem) for pair in NAMES.values() for stem in pair):
            return folder
    raise FileNotFoundError(f"no MNIST files in {[str(c) for c in candidates]}; the course package is incomplete")


def mnist_files(split):
    """(images path, labels path) of the `train` or `test` split."""
    if split not in NAMES:
        raise ValueError(f"split must be 'train' or 'test', not {split!r}")
    folder = mnist_dir()
    return tuple(_find(folder, stem) for stem in NAMES[split])


def describe_mnist():
    """One line for a notebook: which copy of MNIST is in use."""
    folder = mnist_dir()
    origin = ("the copy that ships with the course (all of MNIST: 60,000 training and 10,000 test digits)"
              if folder == EMBEDDED_DIR else f"your own copy in {folder}")
    return f"MNIST: {origin}"
