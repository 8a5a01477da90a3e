"""Export my posts: a job on the RQ worker (tasks.py), its progress live on the page."""
from flask import Response, abort, current_app, jsonify, redirect, render_template, request, url_for
from flask_login import current_user

from ..extensions import db
from ..models import Export
from . import bp


@bp.get("/export")
def export_page():
    exports = db.session.scalars(db.select(Export).filter_by(user_id=current_user.id)
                                 .order_by(Export.id.desc()).limit(10)).all()
    return render_template("main/export.html", exports=exports)


@bp.post("/export")
def start_export():
    export = Export(user_id=current_user.id)
    db.session.add(export)
    db.session.commit()
    current_app.task_queue.enqueue("chirp.tasks.export_posts", export.id, job_timeout=600)
    if request.accept_mimetypes.best == "application/json":
        return jsonify(id=export.id), 202
    return redirect(url_for("main.export_page"))


@bp.get("/export/<int:export_id>.csv")
def download(export_id):
    export = db.session.get(Export, export_id)
    if export is None or export.user_id != current_user.id or export.csv is None:
        abort(404)
    return Response(export.csv, mimetype="text/csv", headers={
        "Content-Disposition": f"attachment; filename=chirp-posts-{export.id}.csv"})
