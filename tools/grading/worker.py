"""Inside the grading sandbox: run a submission's cells and call its functions, one request per line.

``tools/grading/sandbox.py`` starts this file as the sandbox's account, with ``python -I -S`` (no
environment variables, no user or ``.pth`` files: the Python packages are on the path, this
repository is not, so neither attnlib nor the course can be imported). It reads JSON requests on
standard input and answers each with one line of JSON on the channel it was started with:

- ``{"op": "exec", "code": ...}`` runs a cell's code in the submission's namespace (plain Python,
  no IPython): ``{"stdout": ..., "error": null}`` or the error's name, value and traceback;
- ``{"op": "call", "function": ..., "args": ...}`` calls a function the cells defined on arguments
  in ``codec``'s JSON: ``{"stdout": ..., "value": ...}`` or the error.

Everything it answers is data the grader judges; nothing here decides a grade.
"""

import contextlib
import io
import json
import os
import sys
import sysconfig
import traceback

# -I leaves out this file's folder; -S every site-packages: numpy's comes back, no .pth file is read
# (so attnlib's editable install is not on the path either).
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), sysconfig.get_paths()["purelib"]]

from codec import CodecError, decode, encode  # noqa: E402

#: The most text a cell's prints send back.
MAX_STDOUT = 20_000


def _error(error: BaseException) -> dict:
    frames = error.__traceback__.tb_next  # the submission's, not this file's
    lines = traceback.format_exception(type(error), error, frames)
    return {"ename": type(error).__name__, "evalue": str(error)[:2000], "traceback": lines[-8:]}


def _run(namespace: dict, request: dict) -> dict:
    """One request's answer."""
    printed = io.StringIO()
    reply: dict = {"error": None}
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            if request["op"] == "exec":
                exec(compile(request["code"], "<your cell>", "exec"), namespace)
            else:
                function = namespace.get(request["function"])
                if not callable(function):
                    raise NameError(f"your notebook defines no function {request['function']}")
                reply["value"] = encode(function(*decode(request["args"])))
    except CodecError as error:
        reply["error"] = {"ename": "ValueError", "evalue": f"your function returned {error}", "traceback": []}
    except BaseException as error:  # a submission's SystemExit or KeyboardInterrupt too
        reply["error"] = _error(error)
    reply["stdout"] = printed.getvalue()[:MAX_STDOUT]
    return reply


def main() -> None:
    """Answer requests until standard input closes."""
    channel = os.fdopen(os.dup(1), "w")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # a submission's own writes to the standard streams reach nobody
    os.dup2(quiet, 2)
    namespace: dict = {"__name__": "__main__"}
    for line in sys.stdin:
        request = json.loads(line)
        channel.write(json.dumps({"id": request["id"], **_run(namespace, request)}) + "\n")
        channel.flush()


if __name__ == "__main__":
    main()
