"""The kernel side of the judge's probes: files shipped as TEXT into the student's kernel (see
`probes.probe_code`), never imported by the grader. Everything here runs where the student's code can patch
it, so it decides nothing: it runs the student's code on the judge's inputs and reports data back.
"""
