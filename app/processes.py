"""Stopping a child process politely, then firmly."""
import subprocess


def stop(process, seconds=10):
    """SIGTERM ``process`` (a Popen or None) and wait up to ``seconds``; then SIGKILL."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
