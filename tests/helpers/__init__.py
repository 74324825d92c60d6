"""What the tests share: course paths, fixtures' building blocks, classes of submissions, solved code.

Test modules import from here and never from one another or from conftest: a test module imported by
another is imported twice (once by pytest), and what it shares hides among its tests
(tests/unit/test_architecture.py checks it). pytest puts tests/ on sys.path, so `from helpers.X import Y` works
in every test module, in conftest, and in tools/soak_judge.py run as a script."""
