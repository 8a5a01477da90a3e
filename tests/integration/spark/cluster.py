"""A real Spark standalone cluster for tests and benchmarks: one master, one worker.

``local[*]`` runs the driver and every task in one JVM, so it hides what a
``spark://`` master needs: executors in JVMs (and Python workers) of their
own, started by a worker, that get the job's Python and code from the
driver and read its input from storage they can see. This starts the
master and worker from the installed PySpark (its ``bin/spark-class``; no
download), bound to 127.0.0.1 only (``SPARK_LOCAL_IP``; the web UIs too),
every port free-picked, every log, PID and work folder under ``folder``, and
a Spark configuration folder of its own so the machine's is not picked up.

    cluster = StandaloneCluster(tmp_path / "cluster")
    cluster.start()              # returns once the worker has registered
    try:
        ... spark-submit --master cluster.url ...
    finally:
        cluster.stop()           # the whole process tree, by process group and pid
        assert not cluster.leftovers()

:meth:`stop` ends each daemon's process group (the daemons, the executors a
worker started) with SIGTERM, then SIGKILL after a bounded wait, and then any
process it recorded as a descendant beforehand that is still alive (PySpark's
Python daemon makes a process group of its own).
"""
import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pyspark

from tests.support import free_port

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


def loopback_env(folder, **extra):
    """The environment for a Spark JVM of ours: loopback only, our folders, our
    (empty) configuration folder, nothing of the machine's ``spark-env.sh``."""
    folder = Path(folder)
    conf = folder / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_CONF_DIR=str(conf),
               SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_HOSTNAME="127.0.0.1",
               SPARK_PUBLIC_DNS="127.0.0.1", SPARK_LOG_DIR=str(folder / "logs"),
               SPARK_PID_DIR=str(folder / "pids"))
    env.update(extra)
    return env


def _processes():
    """{pid: (ppid, pgid, start time, state)} of every process now, from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        found[int(entry.name)] = (int(fields[1]), int(fields[2]), int(fields[19]), fields[0])
    return found


def _alive(pid, started, table=None):
    """Whether ``pid`` is still the process that started at ``started`` (not a zombie)."""
    info = (table if table is not None else _processes()).get(pid)
    return info is not None and info[2] == started and info[3] != "Z"


def group_members(pgid, wait=10.0):
    """Pids of the live (not zombie) processes in process group ``pgid``, after
    waiting up to ``wait`` seconds for them to go (a killed process takes a moment)."""
    deadline = time.monotonic() + wait
    while True:
        members = [pid for pid, info in _processes().items() if info[1] == pgid and info[3] != "Z"]
        if not members or time.monotonic() >= deadline:
            return members
        time.sleep(0.2)


class StandaloneCluster:
    """A Spark standalone master and one worker (``cores``, ``memory``) on 127.0.0.1."""

    def __init__(self, folder, cores=2, memory="2g", daemon_memory="512m"):
        self.folder = Path(folder)
        self.cores = cores
        self.memory = memory
        self.port, self.webui_port, self.worker_webui_port = free_port(), free_port(), free_port()
        self.env = loopback_env(self.folder, SPARK_DAEMON_MEMORY=daemon_memory,
                                SPARK_WORKER_DIR=str(self.folder / "work"))
        self.processes = {}   # name -> Popen (each the leader of its own process group)
        self.recorded = {}    # pid -> start time, of every process in our trees
        # The master's REST submission server stays off (another port; not needed).
        properties = self.folder / "conf" / "daemons.properties"
        properties.write_text("spark.master.rest.enabled false\n"
                              "spark.worker.cleanup.enabled false\n")
        self.properties = properties

    @property
    def url(self):
        """The master URL to submit to."""
        return f"spark://127.0.0.1:{self.port}"

    @property
    def webui(self):
        return f"http://127.0.0.1:{self.webui_port}"

    def _launch(self, name, *arguments):
        logs = self.folder / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{name}.out", "wb") as out:
            self.processes[name] = subprocess.Popen(
                [str(SPARK_CLASS), *arguments], env=self.env, cwd=self.folder,
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)

    def log(self, name, tail=3000):
        """The end of a daemon's console output (for failure messages)."""
        try:
            return (self.folder / "logs" / f"{name}.out").read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def state(self):
        """The master's JSON status (aliveworkers, workers, activeapps, …), or None."""
        try:
            with urllib.request.urlopen(self.webui + "/json/", timeout=2) as reply:
                return json.loads(reply.read())
        except (OSError, ValueError):
            return None

    def _wait(self, what, ready, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise RuntimeError(f"spark {name} exited ({process.returncode}) while "
                                       f"waiting for {what}:\n{self.log(name)}")
            state = self.state()
            if state is not None and ready(state):
                return state
            time.sleep(0.5)
        logs = "\n".join(f"--- {name}\n{self.log(name)}" for name in self.processes)
        raise TimeoutError(f"no {what} within {timeout} s:\n{logs}")

    def start(self, timeout=120):
        """Start the master, then the worker; return once the worker is registered ALIVE."""
        try:
            self._launch("master", MASTER_CLASS, "--host", "127.0.0.1", "--port", str(self.port),
                         "--webui-port", str(self.webui_port),
                         "--properties-file", str(self.properties))
            self._wait("master", lambda state: state.get("status") == "ALIVE", timeout)
            self._launch("worker", WORKER_CLASS, "--host", "127.0.0.1", "--port", "0",
                         "--webui-port", str(self.worker_webui_port),
                         "--cores", str(self.cores), "--memory", self.memory,
                         "--work-dir", str(self.folder / "work"),
                         "--properties-file", str(self.properties), self.url)
            return self._wait("a registered worker",
                              lambda state: state.get("aliveworkers", 0) >= 1, timeout)
        except BaseException:
            self.stop()
            raise

    def _record(self):
        """Note every process now in our trees (descendants of the daemons, or in their
        process groups), so that stop() can find them even once re-parented."""
        table = _processes()
        groups = {process.pid for process in self.processes.values()}
        children = {}
        for pid, (ppid, _, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        todo = [pid for pid, info in table.items() if pid in groups or info[1] in groups]
        while todo:
            pid = todo.pop()
            if pid in table and pid not in self.recorded:
                self.recorded[pid] = table[pid][2]
                todo.extend(children.get(pid, ()))

    def stop(self, grace=20):
        """Stop everything this cluster started; bounded (``grace`` s, then SIGKILL)."""
        self._record()
        for process in self.processes.values():
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        self._record()  # executors started late, if any
        for process in self.processes.values():
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(10)
        deadline = time.monotonic() + 10
        while self.leftovers() and time.monotonic() < deadline:
            for pid in self.leftovers():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)

    def leftovers(self):
        """Pids of processes this cluster started that are still alive (should be none)."""
        table = _processes()
        alive = [pid for pid, started in self.recorded.items() if _alive(pid, started, table)]
        groups = {process.pid for process in self.processes.values()}
        alive += [pid for pid, info in table.items()
                  if info[1] in groups and info[3] != "Z" and pid not in alive]
        return sorted(alive)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
