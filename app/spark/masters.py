"""Telling a local Spark master from a cluster's, without importing PySpark.

A local master (``local``, ``local[N]``, ``local[*]``, ``local[N,F]``) runs
every task in the driver's JVM: the driver's Python, code and files are the
executors'. Anything else (``spark://``, ``yarn``, ``k8s://``, and
``local-cluster[…]``, Spark's test mode with executor JVMs of their own) has
executors in processes of their own, usually on other machines, which must
be given the job's Python and code and must see its input and output paths.
The launcher (app/spark/launcher.py) and the rollup job both ask this; it lives in app/ because
the web app must not import the workers (tests/unit/test_boundaries.py).
"""


def is_local(master):
    """True when ``master`` (None meaning the default ``local[*]``) is a local one."""
    return master is None or master == "local" or master.startswith("local[")
