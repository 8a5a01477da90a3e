"""Private messages: send one, read yours; the unread badge every page shows."""
from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from ..extensions import db, herald
from ..models import Message, User
from . import bp


def unread():
    return db.session.scalar(db.select(db.func.count(Message.id)).filter_by(
        recipient_id=current_user.id, read=False))


@bp.app_context_processor
def badge_count():
    return {"unread_messages": unread if current_user.is_authenticated else lambda: 0}


@bp.get("/messages")
def messages():
    received = db.session.scalars(db.select(Message).filter_by(recipient_id=current_user.id)
                                  .order_by(Message.id.desc()).limit(50)).all()
    sent = db.session.scalars(db.select(Message).filter_by(sender_id=current_user.id)
                              .order_by(Message.id.desc()).limit(20)).all()
    fresh = {message.id for message in received if not message.read}
    for message in received:
        message.read = True
    db.session.commit()
    people = db.session.scalars(db.select(User).where(User.id != current_user.id)
                                .order_by(User.display_name)).all()
    return render_template("main/messages.html", received=received, sent=sent, fresh=fresh,
                           people=people, to=request.args.get("to", type=int))


@bp.post("/messages")
def send_message():
    recipient = db.session.get(User, request.form.get("to", type=int) or 0)
    body = request.form.get("body", "").strip()
    if recipient is None or recipient.id == current_user.id:
        abort(400)
    if not body or len(body) > 1000:
        flash("A message is 1 to 1000 characters.", "error")
        return redirect(url_for("main.messages", to=recipient.id))
    db.session.add(Message(sender_id=current_user.id, recipient_id=recipient.id, body=body))
    herald.publish("messages.new", f"New message from {current_user.display_name}",  # Herald
                   user=str(recipient.id), url="/messages")                           # Herald
    db.session.commit()
    flash(f"Sent to {recipient.display_name}.")
    return redirect(url_for("main.messages"))


@bp.get("/messages/badge")
def badge():
    """The unread count, for htmx to swap into the badge when herald:messages.new fires."""
    return render_template("main/_badge.html")
