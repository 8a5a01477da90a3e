"""The README is the index of docs/: every page there is linked from it and
named in its layout block, and every docs link in it leads to a page.

The architecture page's picture is checked too: an SVG that parses, with the
title and description a screen reader announces.
"""
import re
import xml.etree.ElementTree as ET

from tests.support import ROOT

DOCS = ROOT / "docs"
LINK = re.compile(r"\]\((docs/[^)#\s]+)")  # a Markdown link target under docs/
SVG = "{http://www.w3.org/2000/svg}"


def pages():
    return {p.name for p in DOCS.glob("*.md")}


def readme():
    return (ROOT / "README.md").read_text()


def linked(text):
    """The docs pages ``text`` links to (``docs/x.md``, anchors dropped)."""
    return {target.removeprefix("docs/") for target in LINK.findall(text)}


def layout_names(text):
    """The file names the layout block's ``docs/`` entry lists (its line and the
    indented lines after it)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"docs/\s{2,}", line))
    entry = [lines[start].removeprefix("docs/")]
    for line in lines[start + 1:]:
        if not line.startswith(" "):
            break
        entry.append(line)
    return set(re.findall(r"[\w-]+\.md", " ".join(entry)))


def test_every_docs_page_is_linked_from_the_readme():
    assert sorted(pages() - linked(readme())) == [], "docs pages README.md does not link"


def test_every_docs_link_in_the_readme_leads_to_a_page():
    dead = sorted(target for target in LINK.findall(readme()) if not (ROOT / target).is_file())
    assert dead == []


def test_the_readme_layout_names_every_docs_page():
    assert sorted(pages() - layout_names(readme())) == [], "docs pages the layout block leaves out"


def test_the_checks_read_links_and_the_layout_as_written():
    assert linked("see [a](docs/a.md), [b](docs/b.md#part) and [c](clients/c.md)") == {"a.md", "b.md"}
    text = "app/   x.md\ndocs/           a.md, b-c.md,\n                d.md\ndeploy/   e.md\n"
    assert layout_names(text) == {"a.md", "b-c.md", "d.md"}


def test_the_architecture_page_shows_its_picture():
    page = (DOCS / "architecture.md").read_text()
    assert re.search(r"!\[[^\]]+\]\(architecture\.svg\)", page), "no ![...](architecture.svg)"
    svg = ET.parse(DOCS / "architecture.svg").getroot()
    assert svg.tag == SVG + "svg" and svg.get("viewBox")
    assert svg.find(SVG + "title").text.strip() and svg.find(SVG + "desc").text.strip()
    labels = [node for node in svg.iter(SVG + "text") if "".join(node.itertext()).strip()]
    assert len(labels) >= 20, "the picture's boxes and arrows are labelled"


MAP = re.compile(r"^\| `((?:wire/)?[\w]+\.py)` \|", re.MULTILINE)


def test_the_one_map_of_app_realtime_names_every_module_and_only_those():
    """docs/architecture.md's table of app/realtime/ is the one map of the package
    (its __init__, wire/__init__ and docs/realtime.md point to it): three maps
    used to each miss different files."""
    text = (DOCS / "architecture.md").read_text()
    section = text[text.index("## Where the code is: `app/realtime/`"):]
    section = section[:section.index("\n## ")]
    mapped = MAP.findall(section)
    package = ROOT / "app" / "realtime"
    modules = sorted(str(p.relative_to(package)) for p in package.rglob("*.py"))
    assert sorted(mapped) == modules
    assert len(mapped) == len(set(mapped)), "a module named twice"
