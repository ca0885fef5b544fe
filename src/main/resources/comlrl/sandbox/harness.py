# The sandbox harness: runs one program and its assert tests inside the sandboxed interpreter.
# Input (stdin, one JSON object): nonce, code, tests, limits {cpu_s, memory_bytes, processes,
# open_files, file_bytes}. Output: verdict lines on stderr, "<nonce> {json}", the last one final.
# Limits are set here, before the program is read or run; each assert of the tests is one test.
import ast, json, os, resource, sys, traceback

_request = json.loads(sys.stdin.read())
_nonce = _request["nonce"]
_main_pid = os.getpid()
_verdict_fd = os.dup(2)
_limits = _request["limits"]
# soft = hard, except CPU: SIGXCPU at the limit (reported as a timeout), SIGKILL one second later
for _name, _key in (("RLIMIT_CPU", "cpu_s"), ("RLIMIT_AS", "memory_bytes"), ("RLIMIT_NPROC", "processes"),
                    ("RLIMIT_NOFILE", "open_files"), ("RLIMIT_FSIZE", "file_bytes"), ("RLIMIT_CORE", None)):
    _value = 0 if _key is None else _limits.get(_key)
    if _value is not None:
        resource.setrlimit(getattr(resource, _name), (_value, _value + (_key == "cpu_s")))


def _report(status, passed, total, message, final):
    """One verdict line, written by the harness's own process only (never by a fork of the program)."""
    if os.getpid() != _main_pid:
        os._exit(1)
    line = json.dumps({"status": status, "tests_passed": passed, "tests_total": total,
                       "message": message, "final": final})
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os.write(_verdict_fd, ("\n" + _nonce + " " + line + "\n").encode("utf-8", "replace"))


def _error_line(exc, source, filename):
    """'line N: <source line>: Type: message' for the innermost frame of the program or the tests."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            lines = source.splitlines()
            text = lines[frame.lineno - 1].strip() if 0 < frame.lineno <= len(lines) else ""
            where = "line %d: %s: " % (frame.lineno, text)
    return where + "".join(traceback.format_exception_only(type(exc), exc)).strip()


def _failure(exc, node, tests):
    """The message of the first failing test: the assert's source (and its message), or the error line."""
    if isinstance(exc, AssertionError):
        detail = str(exc)
        return "failed: " + (ast.get_source_segment(tests, node) or "assert") + (" (" + detail + ")" if detail else "")
    return _error_line(exc, tests, "<tests>")


def _status_of(exc):
    return "memory_limit" if isinstance(exc, MemoryError) else "runtime_error"


def _main():
    code, tests = _request["code"], _request.get("tests") or ""
    try:
        test_tree = ast.parse(tests, "<tests>")
    except SyntaxError as e:
        _report("syntax_error", 0, 0, "tests: " + "".join(traceback.format_exception_only(SyntaxError, e)).strip(), True)
        return
    total = sum(isinstance(node, ast.Assert) for node in test_tree.body)
    try:
        program = compile(code, "<code>", "exec")
    except (SyntaxError, ValueError) as e:
        _report("syntax_error", 0, total, "".join(traceback.format_exception_only(type(e), e)).strip(), True)
        return
    scope = {"__name__": "__main__", "__builtins__": __builtins__}
    _report("ok", 0, total, "", False)
    try:
        exec(program, scope)
    except SystemExit:
        pass
    except BaseException as e:
        _report(_status_of(e), 0, total, _error_line(e, code, "<code>"), True)
        return
    passed, first_failure = 0, ""
    for node in test_tree.body:
        statement = compile(ast.Module(body=[node], type_ignores=[]), "<tests>", "exec")
        try:
            exec(statement, scope)
            passed += isinstance(node, ast.Assert)
        except MemoryError as e:
            _report("memory_limit", passed, total, _error_line(e, tests, "<tests>"), True)
            return
        except BaseException as e:
            first_failure = first_failure or _failure(e, node, tests)
        _report("ok", passed, total, first_failure, False)
    _report("ok", passed, total, first_failure, True)


_main()
sys.stdout.flush()
os._exit(0)
