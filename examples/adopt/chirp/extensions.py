"""The extensions, made unbound here and bound to the app in create_app."""
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf.csrf import CSRFProtect

from herald_client.flask import Herald

db = SQLAlchemy()
migrate = Migrate()
login = LoginManager()
csrf = CSRFProtect()
herald = Herald()  # Herald

login.login_view = "auth.login"
login.login_message = "Please sign in to see that page."
