"""The ``pages`` blueprint, apart from its routes, so that route modules and the
package can both import it without importing each other."""
from flask import Blueprint

bp = Blueprint("pages", __name__.rsplit(".", 1)[0])
