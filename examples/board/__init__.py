"""A Flask + Backbone board that adopts Herald.

Its cards live in SQLAlchemy models (models.py); ``herald.track`` (live.py)
turns each commit that changes a card into a ``board.card.*`` data event
through Herald's transactional outbox, with no publish in the views
(app.py); the page renders its cards with Herald's cursor and syncs from it
(static/board.js).
"""
