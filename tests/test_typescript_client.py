"""A TypeScript client typed from the served OpenAPI document compiles against the answers'
fields: openapi-typescript (npm, pinned in package.json) generates the types and `tsc
--noEmit` (strict) compiles a file that reads earned value, a risk's score, a work package's
budget, the business case's state, a seat and a write's warnings. A field the document left
untyped is `unknown` there, and reading a member of it does not compile.

Needs the pinned npm packages (`npm install`, which `make contract-prism` runs): skipped, with
one line saying so, without them."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "node_modules" / ".bin"
GENERATOR = BIN / "openapi-typescript"
TSC = BIN / "tsc"

pytestmark = pytest.mark.skipif(
    not (GENERATOR.exists() and TSC.exists() and shutil.which("node")),
    reason="openapi-typescript and typescript are not installed: run npm install",
)

USE = """\
import type { components } from "./api";

type Schemas = components["schemas"];

export function readings(
  status: Schemas["ProjectStatus"],
  risk: Schemas["Risk"],
  wp: Schemas["WorkPackage"],
  charter: Schemas["BusinessCase"],
  report: Schemas["StatusReport"],
  change: Schemas["ChangeRequest"],
): string[] {
  const ev = status.earnedValue;
  const cpi: number | null = ev ? ev.cpi : null;
  const spi: number | null = ev ? ev.spi : null;
  const bac: number | null = ev ? ev.bac : null;
  const packages: number = ev?.workPackages?.length ?? 0;
  const score: number | null = risk.score;
  const budget: number | null = wp.budget;
  const baseline: number | null = wp.budgetBaseline;
  const variance: number | null = wp.scheduleVarianceDays;
  const state: string = charter.approvalStatus;
  const acts: string[] = charter.availableActs;
  const npv: number | null = charter.financialCase.builtin.computed.npv;
  const costRag: string = status.derived.costRag;
  const slip: number | null = status.figures.scheduleSlipDays;
  const published: string | null = report.publishedAt;
  const applied: string = change.applicationState;
  const warnings = wp.warnings?.map((w) => `${w.field}: ${w.message}`) ?? [];
  const seat = charter.decisionAuthority;
  const who: string = typeof seat === "string" ? seat : (seat?.accountId ?? "") || "";
  // @ts-expect-error a score is a number: were it untyped (any), this would compile
  const wrong: string = risk.score;
  return [
    String(cpi), String(spi), String(bac), String(packages), String(score), String(budget),
    String(baseline), String(variance), state, acts.join(), String(npv), costRag, String(slip),
    String(published), applied, who, String(wrong), ...warnings,
  ];
}
"""
TSCONFIG = """\
{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "target": "ES2020",
    "module": "ES2020",
    "moduleResolution": "node"
  },
  "files": ["use.ts", "api.d.ts"]
}
"""


def _run(*command: str | Path, cwd: Path) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout


def test_a_typescript_client_compiles_against_the_answers_fields(client, tmp_path):
    served = client.get("/api/v1/openapi.json")
    assert served.status_code == 200
    (tmp_path / "openapi.json").write_bytes(served.content)
    _run(GENERATOR, "openapi.json", "-o", "api.d.ts", cwd=tmp_path)
    (tmp_path / "use.ts").write_text(USE)
    (tmp_path / "tsconfig.json").write_text(TSCONFIG)
    _run(TSC, "-p", "tsconfig.json", cwd=tmp_path)
