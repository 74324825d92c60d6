# %% [markdown] locked
# # Bonus · The MLP capstone on your own babygrad
#
# Every chapter was graded on its own: its notebook ran on the course's finished code for the
# chapters before it, so a slip in chapter 3 never cost points in chapter 9. That also means no
# grade so far has asked whether **your** chapters work together. This optional assignment does.
#
# It trains chapter 9's capstone recipe (your `build_mlp()`, one epoch over the 60,000 training
# digits in shuffled batches of 64, `Adam(lr=0.002)`, seed 0) entirely on your own library: your
# `Tensor` and autodiff from chapters 2 and 3, your layers and `SoftmaxLoss` from chapter 4, your
# `Adam`, `DataLoader`, initializers and checkpoints from chapters 5 to 8, your `Trainer` from chapter
# 9. The course's code is not used at all. The trained model must classify at least **95%** of the
# 10,000 held-out test digits, the same threshold as chapter 9's capstone (`MLP_ACCURACY` in
# `autograder/student/checks/capstone.py`). Its points, written above, are bonus points, which your
# instructor may add to your grade; no chapter's grade depends on it.
#
# ## Your library
#
# Your library is the folder `mybabygrad/`, one module per chapter, made from your notebooks:
#
# * the **Keep your library** cell at the end of chapters 2 to 10 exports that chapter (save the
#   notebook first: it exports the saved file), or, in a terminal in the chapter's folder,
#   `python -m autograder export NOTEBOOK.ipynb`;
# * this bonus needs chapter 9's module, `ch09_trainer.py`, and every chapter it builds on (2 to 8).
#   Export a chapter again after you fix it.
#
# The cell below looks for `mybabygrad/` next to this notebook, then next to this notebook's folder
# (where the export puts it when your chapter folders sit side by side), then, on Google Colab, in
# `My Drive/babygrad/mybabygrad/` (mount your Drive first: Files panel, *Mount Drive*).
#
# ## What to hand in
#
# This notebook **and** the `mybabygrad/` folder, next to each other in one folder (on Colab, download
# `My Drive/babygrad/mybabygrad/` and hand it in with the notebook). Grading runs this notebook again,
# in a sandbox, on the `mybabygrad/` you handed in: a package left on your computer counts for nothing.
# Through an LMS that takes files rather than folders (Canvas), upload the notebook and every `.py`
# file of `mybabygrad/` (`ch02_tensor.py` to `ch09_trainer.py`, and `__init__.py`), each as it is named:
# the course's collector puts the modules back into a `mybabygrad/` beside your notebook.

# %% provided
from autograder.student.checks import Checker
from autograder.student.my_package import load_my_library

load_my_library(globals())      # your mybabygrad/: chapter 9 and every chapter it builds on, nothing of the course's
check = Checker(globals())

# %% [markdown] locked
# The cell above says which chapters it loaded, or what is missing. If it names an error, the message
# says in which of your files: fix the exercise in that chapter's notebook and export it again.
#
# ## The capstone, on your library
#
# The graded cell below builds a fresh model with your `build_mlp()`, trains it with your `Trainer`
# by the recipe above, and counts its accuracy on the test digits (grading counts it again, with the
# trained model's weights, outside your code). On one processor core it takes about as long as chapter
# 9's capstone did; a library that trains much slower has a slow op somewhere.
#
# If it fails while chapter 9's capstone passed, the difference is your earlier code. Run your chapters
# with `USE_MY_LIBRARY = True`: a check that fails with the switch on and passes with it off points at
# the chapter to fix.

# %% test id=test_my_capstone points=5 numeric
verdict = check.my_capstone("mlp")
assert verdict.passed, verdict.message
