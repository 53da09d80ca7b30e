"""The documentation holds together: the README and ``docs/`` link only to what exists in the
repository, name no internal source outside it, list every error reason of the contract in
the client guide's table, and keep every rule id in the rules."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
GAME_PROTO = ROOT / "protos" / "dominos" / "v1" / "game.proto"

#: The pages checked: the README and every page of ``docs/``.
PAGES = [README, *sorted(DOCS.glob("*.md"))]
#: Sources outside the repository that no page may point at or name.
FORBIDDEN = ("../shared", "SPEC.md", "DESIGN.md")

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.I)
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _without_code_blocks(text: str) -> str:
    return _FENCE.sub("", text)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as
    hyphens (the text of links and code spans kept)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors_of(page: Path) -> frozenset[str]:
    """Every anchor of a Markdown page: its headings' slugs (with GitHub's ``-1``, ``-2``
    suffixes for repeats) and explicit ``<a id="...">`` anchors."""
    text = _without_code_blocks(page.read_text())
    found: set[str] = set(_HTML_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def links_of(page: Path) -> list[str]:
    """The link targets of a page, outside code blocks and code spans."""
    text = _INLINE_CODE.sub(lambda m: m.group(0).replace("](", "] ("), page.read_text())
    return _LINK.findall(_without_code_blocks(text))


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_the_pages_exist() -> None:
    for name in ("README.md", "rules.md", "architecture.md", "client-guide.md"):
        assert (DOCS / name).is_file(), f"docs/{name} is missing"


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_relative_link_points_to_an_existing_file_and_heading(page: Path) -> None:
    broken = []
    for target in links_of(page):
        if _EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
            continue
        if not resolved.exists():
            broken.append(f"{target}: no such file")
            continue
        if anchor and resolved.suffix == ".md" and anchor not in anchors_of(resolved):
            broken.append(f"{target}: no heading or anchor #{anchor} in {_page_id(resolved)}")
    assert not broken, broken


def test_the_link_check_sees_a_broken_link_and_a_missing_anchor(tmp_path: Path) -> None:
    """The checker itself: links in code are ignored, real ones are found, anchors slugged."""
    page = tmp_path / "page.md"
    page.write_text(
        '# A title: with `code` (and more)\n\n<a id="r7"></a>\n'
        "[a](missing.md) [b](#a-title-with-code-and-more) `[c](in-code.md)`\n"
        "```\n[d](in-block.md)\n# not a heading\n```\n"
    )
    assert links_of(page) == ["missing.md", "#a-title-with-code-and-more"]
    assert anchors_of(page) == {"a-title-with-code-and-more", "r7"}


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_no_page_names_a_source_outside_the_repository(page: Path) -> None:
    text = page.read_text()
    assert not [name for name in FORBIDDEN if name in text]


def _error_reasons() -> list[str]:
    source = GAME_PROTO.read_text()
    block = re.search(r"enum ErrorReason \{(.*?)\n\}", source, re.S)
    assert block is not None, "no ErrorReason enum in game.proto"
    names = re.findall(r"^\s*ERROR_REASON_(\w+)\s*=\s*\d+\s*;", block.group(1), re.M)
    return [name for name in names if name != "UNSPECIFIED"]


def test_the_client_guide_table_lists_every_error_reason() -> None:
    reasons = _error_reasons()
    assert len(reasons) > 20, reasons
    guide = (DOCS / "client-guide.md").read_text()
    table = "\n".join(line for line in guide.splitlines() if line.lstrip().startswith("|"))
    missing = [name for name in reasons if not re.search(rf"\b{name}\b", table)]
    assert not missing, f"not in a table of docs/client-guide.md: {missing}"


def test_the_rules_keep_every_rule_id() -> None:
    rules = (DOCS / "rules.md").read_text()
    ids = [
        *(f"R{n}" for n in range(1, 18)),
        *(f"S{n}" for n in range(1, 7)),
        *(f"D{n}" for n in range(1, 13)),
    ]
    missing = [rule for rule in ids if not re.search(rf"\b{rule}\b", rules)]
    assert not missing, missing
    anchors = anchors_of(DOCS / "rules.md")
    assert not [rule for rule in ids if rule.lower() not in anchors]


def test_the_readme_links_the_documentation() -> None:
    targets = {target.partition("#")[0] for target in links_of(README)}
    assert {"docs/rules.md", "docs/architecture.md", "docs/client-guide.md"} <= targets
