"""The telling line of a job's error, short enough to show on one card.

A Py4J error's text is a Java stack trace ("An error occurred while calling
o57.collectToPython.\\n: org.apache...InvalidInputException: Input path does
not exist: ...\\n\\tat ..."), and a Python error inside a task comes wrapped in
the worker's traceback: what a person needs is its Spark error class line
("[PATH_NOT_FOUND] ..."), or else its last "SomethingError: message" line
(the root cause, as "Caused by:" lines come last), never the trace.

    reason(error)  # -> "InvalidInputException: Input path does not exist: file:/x"
"""
import re

LIMIT = 500  # characters: one readable paragraph on the Jobs page and in a notification

_TELLING = (r"\[[A-Z_]+\][^\n]*", r"Cannot run program[^\n]*", r"\w+(?:Error|Exception): [^\n]*")


def text_of(error):
    """``str(error)``, or '' when that fails (a Py4J error asks the JVM, which may be gone)."""
    try:
        return str(error)
    except Exception:  # the gateway closed: the type is all there is
        return ""


def reason(error, limit=LIMIT):
    """The line of ``error``'s text that says what went wrong, at most ``limit`` characters;
    its first line when no line looks like an error; its type's name when it has no text."""
    text = text_of(error)
    for pattern in _TELLING:
        found = re.findall(pattern, text)
        if found:
            return _bounded(found[-1].strip(), limit)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _bounded(first, limit) if first else type(error).__name__


def _bounded(line, limit):
    return line if len(line) <= limit else line[:limit - 1] + "…"
