"""The RQ worker: ``python -m chirp.worker [--burst]`` (REDIS_URL, DATABASE_URL, ...).

It builds the app once (Herald's outbox relay starts here: the app is made outside
the ``flask`` command) and runs each job in an app context of its own, in this
process (SimpleWorker: RQ's forking Worker would hand each job a copy of this
process's database connections).
"""
import sys

from rq import SimpleWorker

from . import create_app


class AppWorker(SimpleWorker):
    """Runs each job inside a fresh app context of ``app``."""

    def __init__(self, app, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.app = app

    def execute_job(self, job, queue):
        with self.app.app_context():
            return super().execute_job(job, queue)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    app = create_app()
    worker = AppWorker(app, [app.task_queue], connection=app.redis)
    worker.work(burst="--burst" in argv, with_scheduler=False)


if __name__ == "__main__":
    main()
