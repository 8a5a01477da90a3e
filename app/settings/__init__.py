"""Every setting Herald reads from the environment, in one place, with one parser.

- ``declared``: each setting's name, kind, default and bounds (imports nothing);
- ``read``: :func:`get`, the one reader of the environment, and typed helpers
  for the settings that need more than a parse (``redis_url``, ``herald_url``…);
- ``flask_config``: the web app's ``Config`` (and ``TestConfig``), built from them.

The README's settings table is checked against ``declared.SETTINGS``.
"""
from app.settings.declared import SETTINGS, WORKER_ROLES, Setting
from app.settings.flask_config import Config, TestConfig
from app.settings.read import (
    LOOPBACK_HOSTS,
    ROOT,
    archive_dir,
    child_environment,
    env_file,
    export,
    export_default,
    get,
    herald_url,
    history_max,
    is_set,
    load_env_file,
    port,
    private_redis_socket,
    redis_url,
    rollup_dir,
    secret_key,
    secure_cookies,
    var_dir,
)

__all__ = [
    "SETTINGS", "WORKER_ROLES", "Setting", "Config", "TestConfig", "LOOPBACK_HOSTS", "ROOT",
    "archive_dir", "child_environment", "env_file", "export", "export_default", "get", "herald_url",
    "history_max", "is_set", "load_env_file", "port", "private_redis_socket", "redis_url", "rollup_dir",
    "secret_key", "secure_cookies", "var_dir",
]
