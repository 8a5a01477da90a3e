"""The capability table of docs/contract.md ("## Capabilities"), parsed: the one list
the capability tests drive every route and Socket.IO event from."""
import re
from pathlib import Path

CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "contract.md"
COLUMNS = ("user", "limited", "apikey", "admin")
ROW = re.compile(r"^\| (?P<kind>Socket\.IO )?`(?P<what>[^`]+)`[^|]*\|(?P<cells>.*)\|\s*$")


def table():
    """``{"GET /api/x" or "Socket.IO read": {"user": cell, "limited": cell, ...}}``."""
    text = CONTRACT.read_text()
    section = text.split("## Capabilities", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = ROW.match(line)
        if not match:
            continue
        what = ("Socket.IO " if match["kind"] else "") + match["what"]
        cells = [c.strip() for c in match["cells"].split("|")]
        assert len(cells) == len(COLUMNS), line
        rows[what] = dict(zip(COLUMNS, cells, strict=True))
    assert rows, "no capability table in docs/contract.md"
    return rows


def events(rows):
    """The Socket.IO rows: ``{event: cells}``."""
    return {what.split()[1]: cells for what, cells in rows.items()
            if what.startswith("Socket.IO ")}


def allows(cell):
    """Whether a cell lets the caller in at all (``topics``: narrowed, but in)."""
    return cell not in ("no", "—")
