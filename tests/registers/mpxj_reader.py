"""MPXJ, an independent reader of Microsoft Project files (Java, through the `mpxj` and
`JPype1` packages of the dev extras), run in a child process so that the test process never
hosts a Java virtual machine."""

import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = r"""
import json, sys
import jpype
import mpxj  # noqa: F401  (puts MPXJ's jars on the class path)
jpype.startJVM()
from org.mpxj.reader import UniversalProjectReader
project = UniversalProjectReader().read(sys.argv[1])
def text(value):
    return None if value is None else str(value)
def number(value):
    return None if value is None else float(str(value))
tasks = []
for t in project.getTasks():
    tasks.append({
        "uid": int(str(t.getUniqueID())),
        "id": None if t.getID() is None else int(str(t.getID())),
        "leaf": bool(t.getChildTasks().isEmpty()),
        "null": bool(t.getNull()),
        "name": text(t.getName()),
        "outlineLevel": int(str(t.getOutlineLevel())),
        "start": text(t.getStart()),
        "finish": text(t.getFinish()),
        "percentComplete": number(t.getPercentageComplete()),
        "cost": number(t.getCost()),
        "actualCost": number(t.getActualCost()),
        "baselineStart": text(t.getBaselineStart()),
        "baselineFinish": text(t.getBaselineFinish()),
        "baselineCost": number(t.getBaselineCost()),
        "milestone": bool(t.getMilestone()),
        "notes": text(t.getNotes()),
    })
print(json.dumps(tasks))
"""


def available() -> bool:
    return bool(
        importlib.util.find_spec("mpxj")
        and importlib.util.find_spec("jpype")
        and shutil.which("java")
    )


def read(content: bytes) -> list[dict]:
    """The tasks MPXJ reads from an MSPDI document."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plan.xml"
        path.write_bytes(content)
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    return json.loads(done.stdout.strip().splitlines()[-1])
