"""The timeline: your posts and those of whom you follow, newest first; posting."""
from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from ..extensions import db, herald
from ..models import Post, followers
from ..times import start_of_today
from . import bp

SHOWN = 50


@bp.get("/")
def timeline():
    authors = db.select(followers.c.followed_id).where(followers.c.follower_id == current_user.id)
    posts = db.session.scalars(
        db.select(Post).where((Post.author_id == current_user.id) | Post.author_id.in_(authors))
        .order_by(Post.id.desc()).limit(SHOWN)).all()
    since = start_of_today()
    today = db.session.execute(db.select(Post.id, Post.created_at)
                               .where(Post.created_at >= since)).all()
    counter = {"since": since.isoformat(), "cursor": herald.cursor(),
               "posts": [{"id": id_, "created_at": at.isoformat()} for id_, at in today]}
    return render_template("main/timeline.html", posts=posts, counter=counter)


@bp.post("/posts")
def add_post():
    body = request.form.get("body", "").strip()
    if not body or len(body) > 280:
        flash("A post is 1 to 280 characters.", "error")
        return redirect(url_for("main.timeline"))
    db.session.add(Post(body=body, author_id=current_user.id))
    db.session.commit()  # Herald: posts.created and timeline.refresh go with this commit
    return redirect(url_for("main.timeline"))


@bp.post("/posts/<int:post_id>/delete")
def delete_post(post_id):
    post = db.session.get(Post, post_id)
    if post is None or post.author_id != current_user.id:
        abort(404)
    db.session.delete(post)
    db.session.commit()
    flash("Post deleted.")
    return redirect(url_for("main.timeline"))
