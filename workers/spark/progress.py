"""How far a Spark run has got, from ``SparkContext.statusTracker()``.

A run's Spark jobs share a job group (the run's correlation id), so the
tracker lists them with ``getJobIdsForGroup``; ``getActiveJobsIds`` tells
which are running. Progress is completed tasks over the tasks of every stage
seen so far (a finished job counts whole, skipped stages included). Spark
only learns of later stages as they are planned, so the raw figure can fall
when a new job starts; the percent reported never goes down, and stays
below 100 until the run has actually ended.
"""


class Progress:
    """Reads the tracker for one job group; ``read()`` returns a snapshot dict."""

    def __init__(self, spark_context, group):
        self.tracker = spark_context.statusTracker()
        self.group = group
        self.stages = {}  # stage id -> (completed, total), kept once the tracker forgets it
        self.percent = 0

    def read(self):
        active = set(self.tracker.getActiveJobsIds())
        jobs = self.tracker.getJobIdsForGroup(self.group)
        active_stages = 0
        for job_id in jobs:
            job = self.tracker.getJobInfo(job_id)
            if job is None:
                continue
            for stage_id in job.stageIds:
                stage = self.tracker.getStageInfo(stage_id)
                if stage is not None:
                    done = stage.numCompletedTasks
                    if job.status == "SUCCEEDED":
                        done = stage.numTasks
                    self.stages[stage_id] = (min(done, stage.numTasks), stage.numTasks)
                    active_stages += stage.numActiveTasks > 0
                elif job.status == "SUCCEEDED" and stage_id in self.stages:
                    total = self.stages[stage_id][1]
                    self.stages[stage_id] = (total, total)
        completed = sum(done for done, _ in self.stages.values())
        total = sum(total for _, total in self.stages.values())
        if total:
            self.percent = max(self.percent, min(99, int(100 * completed / total)))
        return {"percent": self.percent, "active_jobs": len(active & set(jobs)),
                "active_stages": active_stages, "tasks_completed": completed, "tasks_total": total}
