"""The warm start: one process per grading slot, inside the sandbox, that has imported torch,
pytest, nbval and ipykernel once, and forks a fresh pair of processes for every submission.

Run by path in the sandbox (``hookviz/grading/run/warm_kernel.py`` starts it), never importing
hookviz itself unless the assignment does. It never runs a submission's code: for each one it
forks a child that sets the limits, drops to the slot's user, forks the kernel (before pytest
has read the notebook, so the kernel's memory holds no expected output or hidden test) and runs
pytest with nbval in-process, its kernel being that fork instead of a new Python. When the
child is gone it kills every other process in the sandbox's PID namespace, empties /tmp,
/dev/shm and /run, removes System V IPC objects, and only then says it is ready again: nothing a
submission started or wrote reaches the next one. Anything it cannot vouch for makes it exit,
and the grader starts a new one.

Protocol on the control socket (SOCK_SEQPACKET, one JSON message each way per step):
  -> {"ready": {...}}                     once warm
  <- {"run": spec} + [results fd, log fd] one submission
  <- {"stop": true}                       pytest reported "done": end the child now
  -> {"exit": code, "clean": bool}        the child is gone and the sandbox swept
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time

import hookviz_privileges  # beside this file: the one source of the privilege drop

# Folders a submission may write to that outlive it in this sandbox (each a tmpfs of bwrap's).
SWEPT = ("/tmp", "/dev/shm", "/run")
WARM_IMPORTS = (
    "pytest",
    "nbformat",
    "nbval.plugin",
    "nbval.kernel",
    "jupyter_client",
    "jupyter_client.blocking",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "IPython",
    "hookviz_grading_plugin",
)


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    preload = json.loads(sys.argv[2])
    started = time.monotonic()
    failed = warm_up(preload)
    threads = len(os.listdir("/proc/self/task"))
    hookviz_privileges.prctl(
        hookviz_privileges.PR_SET_DUMPABLE, 0
    )  # PR_SET_DUMPABLE 0: a submission (maybe our uid) cannot ptrace or read us
    baseline = {path: _entries(path) for path in (*SWEPT, "/dev")}
    send(
        control,
        {
            "ready": {
                "seconds": round(time.monotonic() - started, 3),
                "threads": threads,
                "failed": failed,
                "pid": os.getpid(),
            }
        },
    )
    if threads != 1:  # a fork copies only the calling thread: refuse to fork a half-held lock
        return
    while True:
        message, fds = receive(control)
        if message is None:
            return  # the grader has gone
        spec = message.get("run")
        if spec is None or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        results_fd, log_fd = fds
        child = os.fork()
        if child == 0:
            control.close()
            run_submission(spec, results_fd, log_fd)  # never returns
        os.close(results_fd)
        os.close(log_fd)
        code = wait_child(child, control)
        clean = sweep(baseline)
        send(control, {"exit": code, "clean": clean})
        if not clean:
            return


def warm_up(preload: list[str]) -> list[str]:
    """Import what every submission needs; the names that failed (the kernel will say why)."""
    import importlib

    failed = []
    for name in (*WARM_IMPORTS, *preload):
        try:
            importlib.import_module(name)
        except BaseException:  # an instructor's import may be a name, not a module
            failed.append(name)
    load_core = getattr(sys.modules.get("hookviz"), "_load_core", None)
    if callable(load_core):  # what the kernel's snapshot binds, imported here once
        load_core()
    import gc

    # What is imported now lives as long as every fork: the children's collector skips it, so
    # no collection walks (and copies, page by page) the warm process's memory.
    gc.collect()
    gc.freeze()
    return failed


def run_submission(spec: dict, results_fd: int, log_fd: int) -> None:
    """The submission's pytest, in this forked child; exits with pytest's code."""
    code = 70
    try:
        os.setsid()
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
        hookviz_privileges.drop(spec)  # limits, the slot's user, no new privileges
        workdir = spec["workdir"]
        os.chdir(workdir)
        os.environ.clear()
        os.environ.update(spec["env"])
        os.environ["HOOKVIZ_RESULTS_FD"] = str(results_fd)
        import tempfile

        tempfile.tempdir = None  # computed again from $TMPDIR
        kernel = fork_kernel(workdir, results_fd)
        import nbval.kernel
        import pytest

        nbval.kernel.start_new_kernel = kernel.start
        sys.argv = ["pytest", *spec["pytest_args"]]
        code = int(pytest.main(spec["pytest_args"]))
        kernel.shutdown_kernel(now=True)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


class ForkedKernel:
    """What nbval needs of jupyter_client's KernelManager, for a kernel forked from here."""

    class kernel_spec:  # noqa: N801 (an attribute nbval reads, in jupyter_client's spelling)
        language = "python"

    def __init__(self, pid: int, connection_file: str):
        self.pid, self.connection_file = pid, connection_file
        self.status: int | None = None

    def start(self, startup_timeout: float = 60, kernel_name: str = "", **_: object):
        """nbval's ``start_new_kernel``: this kernel's manager and a ready client."""
        client = self.client()
        client.start_channels()
        try:
            self.wait_for_ready(client, startup_timeout)
        except RuntimeError:
            client.stop_channels()
            self.shutdown_kernel(now=True)
            raise
        return self, client

    def wait_for_ready(self, client, timeout: float) -> None:
        """As ``client.wait_for_ready``, without its fixed waits (0.2 s for a heartbeat this
        manager does not need, 0.2 s of silence on IOPub): the kernel is ready once it answers
        kernel_info, and IOPub is connected once it carries that request's "idle"."""
        from queue import Empty

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            request = client.kernel_info()
            try:
                reply = client.get_shell_msg(timeout=1)
            except Empty:
                continue
            if reply["parent_header"].get("msg_id") != request:
                continue  # an earlier request's answer
            until = time.monotonic() + 0.2
            while (left := until - time.monotonic()) > 0:
                try:
                    message = client.get_iopub_msg(timeout=left)
                except Empty:
                    break
                if (
                    message["parent_header"].get("msg_id") == request
                    and message["msg_type"] == "status"
                    and message["content"].get("execution_state") == "idle"
                ):
                    return
        raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")

    def client(self):
        from jupyter_client.blocking import BlockingKernelClient

        client = BlockingKernelClient(connection_file=self.connection_file)
        client.load_connection_file()
        return client

    def is_alive(self) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
        return self.status is None

    def interrupt_kernel(self) -> None:
        if self.is_alive():
            os.kill(self.pid, signal.SIGINT)

    def restart_kernel(self, now: bool = False, **_: object) -> None:
        raise RuntimeError("a warm-started kernel is never restarted: the submission ends instead")

    def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
        if self.is_alive():
            os.kill(self.pid, signal.SIGKILL)
            _, self.status = os.waitpid(self.pid, 0)


def fork_kernel(workdir: str, results_fd: int) -> ForkedKernel:
    """Fork the kernel now, before pytest reads the notebook; it waits for nbval to connect."""
    import secrets

    from jupyter_client.connect import write_connection_file

    runtime = os.environ.get("JUPYTER_RUNTIME_DIR", workdir)
    path = os.path.join(runtime, f"kernel-{secrets.token_hex(6)}.json")
    write_connection_file(path, ip="127.0.0.1", key=secrets.token_hex(32).encode())
    pid = os.fork()
    if pid == 0:
        become_kernel(path, workdir)
    return ForkedKernel(pid, path)


def become_kernel(connection_file: str, workdir: str) -> None:
    """This process becomes the IPython kernel, as `python -m ipykernel_launcher -f F` would."""
    code = 1
    try:
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the result pipe above all
        hookviz_privileges.prctl(
            hookviz_privileges.PR_SET_DUMPABLE, 1
        )  # dumpable again, as an exec'd kernel is (same user as its own processes)
        import random

        random.seed()  # not the zygote's state, which every fork would share
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path[:] = [workdir] + [p for p in sys.path if p and os.path.abspath(p) != here]
        import ipykernel.kernelapp

        launcher = os.path.join(os.path.dirname(ipykernel.__file__), os.pardir)
        sys.argv = [os.path.join(launcher, "ipykernel_launcher.py"), "-f", connection_file]
        app = ipykernel.kernelapp.IPKernelApp.instance()
        app.initialize(["-f", connection_file])
        app.start()
        code = 0
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def wait_child(child: int, control: socket.socket) -> int:
    """The child's exit code, once it exits or the grader says pytest is done."""
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(control, selectors.EVENT_READ)
        while True:
            pid, status = os.waitpid(child, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            if selector.select(timeout=0.02):
                message, fds = receive(control)
                for fd in fds:
                    os.close(fd)
                if message is None or message.get("stop"):
                    break
    deadline = time.monotonic() + 0.2  # as the cold path: a moment to exit, then it goes
    while time.monotonic() < deadline:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.002)
    os.kill(child, signal.SIGKILL)  # a zombie takes the signal too
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status)


def sweep(baseline: dict[str, set[str]]) -> bool:
    """Kill every process but us and init, empty the writable folders; True when all is gone."""
    me = os.getpid()
    deadline = time.monotonic() + 5
    while True:
        try:
            os.kill(-1, signal.SIGKILL)  # every process we may signal but init and us, at once
        except ProcessLookupError:
            pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
        if not others:
            break
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    import shutil

    for folder, before in baseline.items():
        for name in _entries(folder) - before:
            path = os.path.join(folder, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                return False
        if _entries(folder) != before:
            return False
    return _remove_ipc()


def _remove_ipc() -> bool:
    """Remove the System V shared memory, semaphores and queues a submission left (this IPC
    namespace is the sandbox's own)."""
    left = any(_ipc_ids(kind) for kind in ("shm", "sem", "msg"))
    if not left:
        return True
    import subprocess

    subprocess.run(["ipcrm", "--all"], capture_output=True, timeout=10, check=False)
    return not any(_ipc_ids(kind) for kind in ("shm", "sem", "msg"))


def _ipc_ids(kind: str) -> list[str]:
    try:
        with open(f"/proc/sysvipc/{kind}") as handle:
            return handle.read().splitlines()[1:]
    except OSError:
        return []


def _entries(folder: str) -> set[str]:
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def send(control: socket.socket, message: dict) -> None:
    control.send(json.dumps(message).encode())


def receive(control: socket.socket) -> tuple[dict | None, list[int]]:
    try:
        data, fds, _flags, _address = socket.recv_fds(control, 1 << 20, 4)
    except OSError:
        return None, []
    if not data:
        return None, list(fds)
    try:
        return json.loads(data), list(fds)
    except ValueError:
        return {}, list(fds)


if __name__ == "__main__":
    main()
