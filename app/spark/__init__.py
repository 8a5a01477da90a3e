"""Spark from the web app and the CLI: launching the rollup job and reading its
result (``launcher``), telling a local master from a cluster's (``masters``)."""
