"""The RQ jobs: run by worker.py, inside an app context of their own."""
import csv
import io
import time

from flask import current_app

from .extensions import db, herald
from .models import Export, Post


def export_posts(export_id):
    """Write the user's posts to a CSV, saying how far it is as it goes."""
    export = db.session.get(Export, export_id)
    posts = db.session.scalars(db.select(Post).filter_by(author_id=export.user_id)
                               .order_by(Post.id)).all()
    export.status = "running"
    db.session.commit()
    pace = current_app.config["EXPORT_PACE"]
    try:
        with herald.job("export", user=str(export.user_id), url="/export",   # Herald
                        title="Export of your posts") as job:                 # Herald
            out = io.StringIO()
            writer = csv.writer(out)
            writer.writerow(["id", "created_at", "body"])
            for done, post in enumerate(posts, 1):
                writer.writerow([post.id, post.created_at.isoformat(), post.body])
                time.sleep(pace)  # the demo's stand-in for real work
                job.progress(100 * done / len(posts))                          # Herald
            export.csv, export.rows, export.status = out.getvalue(), len(posts), "done"
            db.session.commit()
            job.result(download=f"/export/{export.id}.csv", rows=len(posts))  # Herald
    except Exception:
        db.session.rollback()
        export.status = "failed"
        db.session.commit()
        raise
