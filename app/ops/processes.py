"""Child processes: stopped politely, then firmly; and never outliving their parent."""
import ctypes
import signal
import subprocess


def die_with_parent():
    """Linux: have the kernel send this process SIGTERM when its parent dies (even by
    SIGKILL), so that no child of a supervisor outlives it. For ``preexec_fn``."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


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
