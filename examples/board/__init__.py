"""A Flask + Backbone board that adopts Herald: see app.py and static/board.js."""
