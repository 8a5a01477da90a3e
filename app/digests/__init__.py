"""Email digests for admins: subscriptions (store), schedules, and the emails (render).

The worker that collects notifications into windows and sends them is
workers/digest.py.
"""
