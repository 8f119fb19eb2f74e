"""axe-core (vendored from npm under tests/browser/vendor, for the tests only) run in the page
with the WCAG 2.2 A and AA rules. The script is evaluated through the browser's debugging
protocol, so the page's CSP is left as it is."""

from pathlib import Path

AXE_SOURCE = (Path(__file__).parent / "vendor" / "axe-4.14.1.min.js").read_text()
WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]

_RUN = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags}});
  return result.violations.map((v) => ({
    id: v.id,
    help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + ": " + n.failureSummary),
  }));
}"""


def axe_violations(page) -> list[dict]:
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE_SOURCE)
    return page.evaluate(_RUN, WCAG_22_AA)


def assert_accessible(page, where: str = "") -> None:
    violations = axe_violations(page)
    assert violations == [], f"axe WCAG 2.2 AA on {where or page.url}:\n" + "\n".join(
        f"- {v['id']} ({v['help']}): " + "; ".join(v["nodes"]) for v in violations
    )
