"""nbgrader's exchange collect (`nbgrader collect`, formgrader's Collect button), copying each submission
from the exchange's inbound folder as intake admits it.

The inbound folder is writable by every student, so what stands in it is the student's to choose: nbgrader's
own copy (`shutil.copytree`) follows links, so a link there to the instructor's source notebook became a
regular copy of it in submitted/, past anything grading checks later. Here only the regular files intake
admits are copied (course_config.configure_nbgrader makes this class nbgrader's collect plugin), and what was
left out is recorded for the problems ledger and the flags report.
"""
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets import Dict, Instance, Unicode

from autograder.grading import intake
from autograder.grading.intake import IntakeLimits


class IntakeCollect(ExchangeCollect):
    """nbgrader's ExchangeCollect whose copy from inbound/ to submitted/ reads through intake."""

    limits = Instance(IntakeLimits, args=(), help="What one submission folder may hold.").tag(config=True)
    notebooks = Dict(value_trait=Unicode(), help="{assignment id: its notebook's file name}, for a submission "
                                                 "graded from its notebook alone.").tag(config=True)
    ledger_directory = Unicode("grading_ledger", help="Where what was left out is recorded, under the "
                                                      "course root.").tag(config=True)

    def do_copy(self, src, dest, log=None):
        dest = Path(dest)
        chapter_id, student = dest.name, dest.parent.name
        names = [self.notebooks[chapter_id]] if chapter_id in self.notebooks else []
        found = intake.survey(src, names, self.limits)
        intake.copy_admitted(src, found, dest)
        for item in found.refused:
            self.log.warning("Left out of %s's %s: %s %s", student, chapter_id, item.path, item.reason)
        if found.over_limit:
            self.log.warning("%s's %s: %s", student, chapter_id, found.over_limit)
        ledger = Path(self.coursedir.root) / self.ledger_directory
        intake.update_record(ledger, chapter_id, student, found, dest)
