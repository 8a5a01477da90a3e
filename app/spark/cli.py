"""``flask --app wsgi spark rollup``: run the rollup job in the foreground."""
import subprocess

import click
from flask import current_app
from flask.cli import AppGroup

from app.settings import ROOT
from app.spark.launcher import rollup_command

spark = AppGroup("spark", help="Run Spark jobs.")


@spark.command("rollup")
@click.option("--archive", help="The archive to read (default: ARCHIVE_DIR, var/archive).")
@click.option("--out", help="Where to write (default: ROLLUP_DIR, var/rollup).")
@click.option("--master", help="Spark master URL (default: SPARK_MASTER or local[*]).")
@click.option("--user", help="Make the job's notifications private to this user.")
def spark_rollup(archive, out, master, user):
    """Run the rollup job in the foreground; its progress shows live in Herald."""
    config = current_app.config
    command = rollup_command(archive or config["ARCHIVE_DIR"], out or config["ROLLUP_DIR"],
                             user=user, master=master)
    raise SystemExit(subprocess.call(command, cwd=ROOT))
