"""The instructor's build: chapter scripts → source, release and solution notebooks, the generated READMEs,
the demo submissions and the student distribution. Runs on the course's own machine, never in a kernel.
"""
