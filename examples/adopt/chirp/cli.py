"""``flask seed``: demo users (alice, bob, carol; password chirp-demo) who follow each other."""
import click

from .extensions import db
from .models import Post, User

DEMO = [("alice", "Alice", "Europe/Paris"), ("bob", "Bob", "America/New_York"),
        ("carol", "Carol", "Asia/Tokyo")]
PASSWORD = "chirp-demo"


def seed(posts=0):
    """The demo users, made once; ``posts`` more posts of each."""
    users = []
    for handle, name, zone in DEMO:
        user = db.session.scalar(db.select(User).filter_by(email=f"{handle}@chirp.test"))
        if user is None:
            user = User(email=f"{handle}@chirp.test", display_name=name, timezone=zone)
            user.set_password(PASSWORD)
            db.session.add(user)
        users.append(user)
    db.session.flush()
    for user in users:
        user.following = [other for other in users if other is not user]
        for number in range(posts):
            db.session.add(Post(body=f"{user.display_name}'s post number {number + 1}", author=user))
    db.session.commit()
    return users


def init_app(app):
    @app.cli.command("seed")
    @click.option("--posts", default=0, help="Posts to add for each demo user.")
    def seed_command(posts):
        """Add the demo users (password chirp-demo), following each other."""
        seed(posts)
        click.echo(f"demo users: {', '.join(f'{h}@chirp.test' for h, _n, _z in DEMO)} "
                   f"(password {PASSWORD})")
