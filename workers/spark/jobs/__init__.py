"""Spark jobs; each exposes ``main(spark, args)`` and runs under spark-submit or ``python -m``."""
