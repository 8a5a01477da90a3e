"""Herald's data pipeline on Spark: the job notifier and the jobs (``jobs/``)."""
