"""The web process's file descriptors: how many connections it can hold.

Every connection is a descriptor, so MAX_CONNECTIONS (0: from the limit) is
what the process's descriptor limit allows, less those it needs for
everything else. wsgi.py asks once, at start.
"""
import resource

OTHER_FDS = 400   # descriptors kept for Redis pools, logs, listeners and the reserve


def fd_budget():
    """Raise the soft RLIMIT_NOFILE to the hard limit; the connections it allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return max(64, soft - OTHER_FDS)
