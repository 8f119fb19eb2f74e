"""Page checks shared by the tests: what the CSP forbids must never be in the markup."""

from html.parser import HTMLParser


class _InlineFinder(HTMLParser):
    def __init__(self):
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self.problems.append("inline <script>")
        if tag == "style":
            self.problems.append("<style> element")
        for name in names:
            if name == "style" or name.startswith("on") or name.startswith("hx-on"):
                self.problems.append(f"{name}= on <{tag}>")
        for name, value in attrs:
            if name in ("href", "src", "action") and (value or "").strip().lower().startswith(
                "javascript:"
            ):
                self.problems.append(f"javascript: URL in {name}= on <{tag}>")


def inline_problems(html: str) -> list[str]:
    """Inline scripts, style elements and attributes, on*/hx-on handlers, javascript: URLs."""
    finder = _InlineFinder()
    finder.feed(html)
    return finder.problems
