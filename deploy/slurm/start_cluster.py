"""A Dask cluster of Slurm jobs for `python -m autograder grade CHAPTER --scheduler ADDRESS`.

    python deploy/slurm/start_cluster.py --jobs 8        # prints the scheduler's address, runs until Ctrl-C
    python deploy/slurm/start_cluster.py --job-script    # prints the batch script each job runs, and exits

Run it on a login node that can submit jobs (sbatch) and that the nodes can reach. The settings are in
jobqueue.yaml next to this file (dask-jobqueue's own format); they take the place of dask-jobqueue's
defaults, and keyword arguments to `slurm_cluster` take the place of them.
"""
import argparse
import time
from pathlib import Path

import dask.config
import yaml

SETTINGS = Path(__file__).with_name("jobqueue.yaml")


def slurm_cluster(settings=SETTINGS, **overrides):
    """dask-jobqueue's SLURMCluster with this course's settings (nothing is submitted before `scale`)."""
    from dask_jobqueue import SLURMCluster

    dask.config.update(dask.config.config, yaml.safe_load(settings.read_text(encoding="utf-8")), priority="new")
    return SLURMCluster(**overrides)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=4, help="Slurm jobs, one Dask worker each (default: 4)")
    parser.add_argument("--job-script", action="store_true", help="print the batch script and exit")
    args = parser.parse_args()
    with slurm_cluster() as cluster:
        if args.job_script:
            print(cluster.job_script())
            return
        cluster.scale(jobs=args.jobs)
        print(f"scheduler: {cluster.scheduler_address}\ndashboard: {cluster.dashboard_link}\n"
              f"grade with: python -m autograder grade CHAPTER --scheduler {cluster.scheduler_address}", flush=True)
        try:
            while True:
                time.sleep(60)
        except KeyboardInterrupt:
            print("stopping: the Slurm jobs are cancelled")


if __name__ == "__main__":
    main()
