"""The signed-in pages: the timeline, people, messages, settings and the export."""
from flask import Blueprint, request
from flask_login import login_required

from ..extensions import herald

bp = Blueprint("main", __name__)


@bp.before_request
@login_required
def signed_in_only():
    """Every page here is for a signed-in user. A page also carries Herald's cursor,
    read before anything else it shows (herald_scripts() renders it): the page then
    goes live from there, and misses nothing published after it (even while Herald
    is away as the page loads)."""
    if request.method == "GET":
        herald.cursor()  # Herald


from . import exports, messages, people, timeline  # noqa: E402,F401
