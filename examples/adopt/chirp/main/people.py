"""Who is on Chirp, following them, and your own settings (name and time zone)."""
from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from ..extensions import db
from ..models import User
from ..times import ZONES
from . import bp


@bp.get("/people")
def people():
    users = db.session.scalars(db.select(User).order_by(User.display_name)).all()
    return render_template("main/people.html", users=users)


@bp.post("/people/<int:user_id>/follow")
def follow(user_id):
    other = db.session.get(User, user_id) or abort(404)
    if other.id != current_user.id and not current_user.follows(other):
        current_user.following.append(other)
        db.session.commit()
    return redirect(url_for("main.people"))


@bp.post("/people/<int:user_id>/unfollow")
def unfollow(user_id):
    other = db.session.get(User, user_id) or abort(404)
    current_user.following = [user for user in current_user.following if user.id != other.id]
    db.session.commit()
    return redirect(url_for("main.people"))


@bp.route("/settings", methods=["GET", "POST"])
def settings():
    if request.method == "POST":
        name = request.form.get("display_name", "").strip()
        zone = request.form.get("timezone", "")
        if not name or len(name) > 60 or zone not in ZONES:
            flash("A name of 1 to 60 characters, and a time zone from the list.", "error")
        else:
            current_user.display_name, current_user.timezone = name, zone
            db.session.commit()  # Herald: open timelines refresh (your name is on your posts)
            flash("Saved.")
            return redirect(url_for("main.settings"))
    return render_template("main/settings.html", zones=ZONES)
