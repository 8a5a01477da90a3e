# Read by Flask's CLI (python-dotenv) when `flask` runs in this checkout: Herald's app.
# Your own settings (VAR_DIR=…, REDIS_URL=…) go in .env (not committed), read by
# bin/flask, make run and make example alike. Use bin/flask: it is .venv's flask.
FLASK_APP=wsgi
