"""Sign in, sign out, sign up."""
from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user, login_user, logout_user

from ..extensions import db
from ..models import User
from ..times import ZONES
from . import bp


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("main.timeline"))
    email = request.form.get("email", "").strip().lower()
    if request.method == "POST":
        user = db.session.scalar(db.select(User).filter_by(email=email))
        if user is not None and user.check_password(request.form.get("password", "")):
            login_user(user)
            return redirect(url_for("main.timeline"))
        flash("Wrong email or password.", "error")
    return render_template("auth/login.html", email=email), 401 if request.method == "POST" else 200


@bp.post("/logout")
def logout():
    logout_user()
    return redirect(url_for("auth.login"))


@bp.route("/register", methods=["GET", "POST"])
def register():
    form = request.form
    if request.method == "POST":
        email = form.get("email", "").strip().lower()
        name = form.get("display_name", "").strip()
        zone = form.get("timezone") if form.get("timezone") in ZONES else "UTC"
        if not email or "@" not in email or not name or len(form.get("password", "")) < 8:
            flash("Give an email, a name and a password of 8 characters or more.", "error")
        elif db.session.scalar(db.select(User).filter_by(email=email)):
            flash("That email is taken.", "error")
        else:
            user = User(email=email, display_name=name[:60], timezone=zone)
            user.set_password(form["password"])
            db.session.add(user)
            db.session.commit()
            login_user(user)
            return redirect(url_for("main.timeline"))
    return render_template("auth/register.html", form=form, zones=ZONES)
